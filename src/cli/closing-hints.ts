import { writeLine, type OutputStream } from './cli-context.ts';
import type { RunOutcome } from './run-view.ts';

/** The lines `cadre run` ends with on stderr: the session id, how to export it and how to go on. */
export function printClosingHints(stderr: OutputStream, outcome: Pick<RunOutcome, 'sessionId' | 'status' | 'databaseFlag'>): void {
  const { sessionId } = outcome;
  const database = outcome.databaseFlag ? ` ${outcome.databaseFlag}` : '';
  writeLine(stderr, '');
  writeLine(stderr, `Session ${sessionId} (${outcome.status}).`);
  writeLine(stderr, `  export:   cadre export ${sessionId} --format markdown${database}`);
  writeLine(stderr, `  continue: cadre run --session ${sessionId}${database} "..."`);
}

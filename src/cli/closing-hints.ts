import { isAbsolute, join, relative } from 'node:path';
import { redactConnectionString } from '../store/redact-connection-string.ts';
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

/**
 * The `--db` a hint must repeat so a pasted command opens the same database, or nothing when the
 * next command finds it anyway: the default file of this folder, or the database `CADRE_DB` names
 * (the shell still has it). A URL is shown as given unless it holds a password or a secret
 * parameter, which become `***` (such a URL is better kept in `CADRE_DB`).
 * @example databaseFlag('/work', {}, 'postgres://cadre@db/cadre') // '--db postgres://cadre@db/cadre'
 */
export function databaseFlag(cwd: string, env: Record<string, string | undefined>, database: string): string | undefined {
  if (database === join(cwd, '.cadre', 'cadre.db')) return undefined;
  if (env.CADRE_DB !== undefined && env.CADRE_DB.trim() !== '' && (env.CADRE_DB === database || join(cwd, env.CADRE_DB) === database || env.CADRE_DB === relative(cwd, database))) return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(database)) return `--db ${holdsSecret(database) ? redactConnectionString(database) : database}`;
  const path = isAbsolute(database) ? relative(cwd, database) : database;
  return `--db ${path.startsWith('..') || path === '' ? database : path}`;
}

/** Whether a database URL carries a password or a secret parameter (a user name alone is none). */
function holdsSecret(url: string): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') return true;
    parsed.username = '';
    const bare = parsed.toString();
    return redactConnectionString(bare) !== bare;
  } catch {
    return true;
  }
}

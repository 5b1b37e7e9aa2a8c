import type { Sandbox } from '../tools/sandbox/create-sandbox.ts';
import { warnOnce } from '../util/warn-once.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import { sandboxWarning } from './sandbox-lines.ts';

/**
 * Says once per process, on `stderr`, what `cadre run` and `cadre serve` find wrong at start:
 * `problems` (agent files that did not load or hold what cadre does not use) and `bash` without a
 * sandbox. A process that loads its configuration again (a second command in one process)
 * repeats nothing.
 */
export async function warnAtStart(context: CliContext, problems: readonly string[], sandbox: Pick<Sandbox, 'status'>): Promise<void> {
  const unconfined = sandboxWarning(await sandbox.status());
  for (const problem of unconfined === undefined ? problems : [...problems, unconfined]) {
    warnOnce(problem, () => writeLine(context.stderr, `cadre: warning: ${problem}`));
  }
}

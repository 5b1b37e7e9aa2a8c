import { warnOnce } from '../util/warn-once.ts';
import { agentWarnings } from './agents.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { OpenedRuntime } from './open-runtime.ts';
import { sandboxWarning } from './sandbox-lines.ts';

/**
 * Says once per process, on `stderr`, what `cadre run` and `cadre serve` find wrong at start: agent
 * files that did not load or hold what cadre does not use, and `bash` without a sandbox. A
 * process that loads its configuration again (a second command in one process) repeats nothing.
 */
export async function warnAtStart(context: CliContext, runtime: Pick<OpenedRuntime, 'agents' | 'toolNames' | 'config' | 'sandbox'>): Promise<void> {
  const problems = [...runtime.agents.errors.map((error) => error.message), ...agentWarnings(runtime.agents, runtime.toolNames, runtime.config.modelAliases)];
  const unconfined = sandboxWarning(await runtime.sandbox.status());
  if (unconfined !== undefined) problems.push(unconfined);
  for (const problem of problems) warnOnce(problem, () => writeLine(context.stderr, `cadre: warning: ${problem}`));
}

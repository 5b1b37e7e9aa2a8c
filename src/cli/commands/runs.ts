import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import type { StoreFlags } from '../command-options.ts';

/** Registers `cadre runs`; the command itself is loaded when it runs. */
export function registerRuns(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('runs')
    .description("list a session's runs (nested ones too), or the latest runs of all sessions, newest first")
    .argument('[session]', 'a session id')
    .option('--limit <n>', 'how many runs without a session id (default 20)')
    .action(async (sessionId: string | undefined, _flags: StoreFlags, command: Command) => {
      const { runsCommand } = await import('../runs.ts');
      exit.code = await runsCommand(context, sessionId, command.optsWithGlobals());
    });
}

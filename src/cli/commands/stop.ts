import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import type { StoreFlags } from '../command-options.ts';

/** Registers `cadre stop`; the command itself is loaded when it runs. */
export function registerStop(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('stop')
    .description('stop a run (and the runs it started) or a whole session: canceled_by_user, from any process')
    .argument('<id>', 'a run id, the short id the live view shows for an active run, or a session id')
    .action(async (id: string, _flags: StoreFlags, command: Command) => {
      const { stopCommand } = await import('../stop.ts');
      exit.code = await stopCommand(context, id, command.optsWithGlobals());
    });
}

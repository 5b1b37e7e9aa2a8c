import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import type { StoreFlags } from '../command-options.ts';

/** Registers `cadre approvals`; the command itself is loaded when it runs. */
export function registerApprovals(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('approvals')
    .description('list the asks for approval that wait for a person, oldest first')
    .action(async (_flags: StoreFlags, command: Command) => {
      const { approvalsCommand } = await import('../approvals.ts');
      exit.code = await approvalsCommand(context, command.optsWithGlobals());
    });
}

import type { Command } from 'commander';
import type { ApproveFlags } from '../approve.ts';
import type { CliContext, ExitCode } from '../cli-context.ts';

/** Registers `cadre approve`; the command itself is loaded when it runs. */
export function registerApprove(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('approve')
    .description('answer an ask for approval (approve, or --deny), from any process')
    .argument('<approval-id>', 'an approval id (apr_...), see cadre approvals')
    .option('--deny', 'deny the call instead')
    .option('--always', 'make the answer a rule for the rest of the session')
    .action(async (id: string, _flags: ApproveFlags, command: Command) => {
      const { approveCommand } = await import('../approve.ts');
      exit.code = await approveCommand(context, id, command.optsWithGlobals());
    });
}

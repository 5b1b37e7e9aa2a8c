import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import { collect } from '../command-options.ts';
import type { TrustFlags } from '../trust.ts';

/** Registers `cadre trust`; the command itself is loaded when it runs. */
export function registerTrust(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('trust')
    .description("show what this workspace's own configuration would allow (programs, where keys go, rules, sandbox openings) and trust it as it is now")
    .option('--show', 'only say whether the workspace is trusted and what trusting it allows')
    .option('--revoke', 'forget the trust in this workspace')
    .option('--agents <dir>', 'also load agent files from this directory (repeatable)', collect)
    .action(async (_flags: TrustFlags, command: Command) => {
      const { trustCommand } = await import('../trust.ts');
      exit.code = await trustCommand(context, command.optsWithGlobals<TrustFlags>());
    });
}

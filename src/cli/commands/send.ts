import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import type { RuntimeFlags } from '../command-options.ts';

/** Flags of `cadre send`. */
export interface SendFlags extends RuntimeFlags {
  interrupt?: boolean;
}

/** Registers `cadre send`; the command itself is loaded when it runs. */
export function registerSend(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('send')
    .description(
      "send a person's message to a run, from any process: before its next model call (at once with --interrupt), into a queued run's task, or as a follow-up of a finished run",
    )
    .argument('<run-id>', 'a run id, or the short id the live view shows for an active run')
    .argument('<message>', 'what the subagent should know or do next')
    .option('--interrupt', 'abort its model call and tool calls under way first')
    .option('--model <spec>', "for a follow-up of a finished run: the model spec, when it is not the session's (or CADRE_MODEL)")
    .option('--base-url <url>', 'for a follow-up of a finished run: the base URL of the model API (or CADRE_BASE_URL)')
    .action(async (runId: string, message: string, _flags: SendFlags, command: Command) => {
      const { sendCommand } = await import('../send.ts');
      exit.code = await sendCommand(context, runId, message, command.optsWithGlobals());
    });
}

import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import type { StoreFlags } from '../command-options.ts';

/** Registers `cadre show`; the command itself is loaded when it runs. */
export function registerShow(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('show')
    .description('show one run: its record, its events as a timeline, and its result (--json: { run, events })')
    .argument('<run>', 'a run id')
    .action(async (runId: string, _flags: StoreFlags, command: Command) => {
      const { showCommand } = await import('../show.ts');
      exit.code = await showCommand(context, runId, command.optsWithGlobals());
    });
}

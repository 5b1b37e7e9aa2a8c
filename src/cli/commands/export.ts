import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import type { ExportFlags } from '../export.ts';

/** Registers `cadre export`; the command itself is loaded when it runs. */
export function registerExport(program: Command, context: CliContext, exit: ExitCode): void {
  const command = program.command('export');
  command
    .description('export a session: its conversation and every run with its events (a run id exports its child session)')
    .argument('<id>', 'a session id (or a run id)')
    .addOption(command.createOption('--format <format>', 'json or markdown (--json: json)').choices(['json', 'markdown']))
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action(async (id: string, _flags: ExportFlags, self: Command) => {
      const { exportCommand } = await import('../export.ts');
      exit.code = await exportCommand(context, id, self.optsWithGlobals<ExportFlags>());
    });
}

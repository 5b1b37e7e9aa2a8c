import type { Command } from 'commander';
import { writeLine, type CliContext, type ExitCode } from '../cli-context.ts';
import type { StoreFlags } from '../command-options.ts';

/** Registers `cadre version`: the same as `cadre --version` (and `-v`), or `{"version":...}` under `--json`. */
export function registerVersion(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('version')
    .description('print the version of cadre')
    .action((_flags: StoreFlags, command: Command) => {
      const version = program.version() ?? '';
      writeLine(context.stdout, command.optsWithGlobals<StoreFlags>().json ? JSON.stringify({ version }) : version);
      exit.code = 0;
    });
}

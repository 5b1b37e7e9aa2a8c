import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import type { StoreFlags } from '../command-options.ts';

/** Registers `cadre sessions`; the command itself is loaded when it runs. */
export function registerSessions(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('sessions')
    .description('list sessions with a primary agent, newest first')
    .option('--limit <n>', 'how many (default 50)')
    .action(async (_flags: StoreFlags, command: Command) => {
      const { sessionsCommand } = await import('../sessions.ts');
      exit.code = await sessionsCommand(context, command.optsWithGlobals());
    });
}

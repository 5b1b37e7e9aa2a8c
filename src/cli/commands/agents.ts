import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import { collect, type RuntimeFlags } from '../command-options.ts';

/** Registers `cadre agents`; the command itself is loaded when it runs. */
export function registerAgents(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('agents')
    .description('list the agents that loaded (with where each came from), and the agent files that did not')
    .option('--agents <dir>', 'also load agent files from this directory (repeatable)', collect)
    .action(async (_flags: RuntimeFlags, command: Command) => {
      const { agentsCommand } = await import('../agents.ts');
      exit.code = await agentsCommand(context, command.optsWithGlobals<RuntimeFlags>());
    });
}

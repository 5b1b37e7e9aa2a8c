import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import { collect } from '../command-options.ts';
import type { ServeFlags } from '../serve.ts';

/** Registers `cadre serve`; the command itself (hono, the AI SDK) is loaded when it runs. */
export function registerServe(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('serve')
    .description('serve the dashboard and HTTP API; loopback only unless --host says otherwise (then with a token)')
    .option('--host <address>', 'address to listen on; anything but loopback requires the printed token', '127.0.0.1')
    .option('--port <number>', 'port to listen on (0: any free port)', '4317')
    .option('--agents <dir>', 'also load agent files from this directory (repeatable)', collect)
    .option('--model <spec>', 'model spec provider:model-id for new sessions (or CADRE_MODEL)')
    .option('--base-url <url>', 'base URL of the model API, for openai-compatible: (or CADRE_BASE_URL)')
    .action(async (_flags: ServeFlags, command: Command) => {
      const { serveCommand } = await import('../serve.ts');
      exit.code = await serveCommand(context, command.optsWithGlobals<ServeFlags>());
    });
}

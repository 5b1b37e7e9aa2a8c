import type { Command } from 'commander';
import { ConfigError } from '../errors/config-error.ts';
import { startDashboard } from '../server/create-server.ts';
import { isWildcardHost } from '../server/dashboard-security.ts';
import { writeLine, type CliContext, type ExitCode } from './cli-context.ts';
import { collect, type RuntimeFlags } from './command-options.ts';
import { loadCliConfig, openRuntime } from './open-runtime.ts';

/** Options of `cadre serve`. */
export interface ServeFlags extends RuntimeFlags {
  host: string;
  port: string;
}

/** Resolves on the first SIGINT or SIGTERM (or when `signal` aborts, for tests). */
function untilStopped(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/**
 * `cadre serve`: the dashboard and HTTP API (docs/dashboard.md) until Ctrl-C. Runs left behind by
 * dead processes are recovered first. On a non-loopback host every request needs the printed token.
 */
export async function serveCommand(context: CliContext, flags: ServeFlags, signal?: AbortSignal): Promise<number> {
  const port = Number(flags.port);
  if (!/^\d+$/.test(flags.port) || port > 65_535) throw new ConfigError(`--port must be a number from 0 to 65535, not '${flags.port}'.`);
  // Without a model the dashboard still shows and stops runs; only new turns need one.
  const config = await loadCliConfig(context, flags);
  // Asks of the dashboard's sessions wait for an answer in the dashboard, the API or cadre approve.
  const runtime = await openRuntime({ context, flags, requireModel: config.model !== undefined, approvals: 'wait' });
  try {
    const recovered = await runtime.cadre.recover();
    if (recovered.resumed.length + recovered.abandoned.length > 0) {
      writeLine(context.stderr, `Recovered runs of stopped processes: ${recovered.resumed.length} resumed, ${recovered.abandoned.length} abandoned.`);
    }
    const dashboard = await startDashboard({ cadre: runtime.cadre, host: flags.host, port });
    writeLine(context.stdout, `cadre dashboard: ${dashboard.url}`);
    if (dashboard.token !== null) {
      writeLine(context.stdout, `Access token: ${dashboard.token}`);
      writeLine(context.stdout, 'Every request needs it (Authorization: Bearer <token>, or ?token= in the page address). Keep it secret.');
    }
    if (isWildcardHost(flags.host)) {
      writeLine(context.stdout, `Listening on every address (${flags.host}): from another machine, use this machine's address with the same ?token=.`);
    }
    if (config.model === undefined) writeLine(context.stderr, 'No model is configured (--model or CADRE_MODEL): new sessions and messages will fail.');
    writeLine(context.stderr, 'Press Ctrl-C to stop.');
    await untilStopped(signal);
    await dashboard.close();
    return 0;
  } finally {
    await runtime.close();
  }
}

/** Registers `cadre serve`. */
export function registerServe(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('serve')
    .description('serve the dashboard and HTTP API; loopback only unless --host says otherwise (then with a token)')
    .option('--host <address>', 'address to listen on; anything but loopback requires the printed token', '127.0.0.1')
    .option('--port <number>', 'port to listen on (0: any free port)', '4317')
    .option('--agents <dir>', 'also load agent files from this directory (repeatable)', collect)
    .option('--model <spec>', 'model spec provider:model-id for new sessions (or CADRE_MODEL)')
    .option('--base-url <url>', 'base URL of the model API, for openai-compatible: (or CADRE_BASE_URL)')
    .option('--db <path>', 'the database (default ./.cadre/cadre.db, or CADRE_DB)')
    .option('--config <file>', 'config file (default ./cadre.config.json)')
    .action(async (_flags: ServeFlags, command: Command) => {
      exit.code = await serveCommand(context, command.optsWithGlobals<ServeFlags>());
    });
}

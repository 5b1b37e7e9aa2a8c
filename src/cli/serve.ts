import { ConfigError } from '../errors/config-error.ts';
import type { StoreFailureError } from '../store/store-failure-error.ts';
import { startDashboard } from '../server/create-server.ts';
import { isWildcardHost } from '../server/dashboard-security.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { RuntimeFlags } from './command-options.ts';
import { loadCliConfig, openRuntime } from './open-runtime.ts';
import { warnAtStart } from './start-warnings.ts';
import { untilStopped } from './until-stopped.ts';
import { describeItem, leftOut } from './workspace-trust-lines.ts';

/** Options of `cadre serve`. */
export interface ServeFlags extends RuntimeFlags {
  host: string;
  port: string;
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
  // A server logs each request (info) unless told a quieter level.
  const runtime = await openRuntime({ context, flags, requireModel: config.model !== undefined, approvals: 'wait', logLevel: 'info' });
  try {
    const recovered = await runtime.cadre.recover();
    // Workflows of stopped processes go on here: their runs were recovered just now.
    const workflows = await runtime.cadre.resumeWorkflows({ files: true });
    if (workflows.length > 0) writeLine(context.stderr, `Resumed workflows of stopped processes: ${workflows.join(', ')}.`);
    if (recovered.resumed.length + recovered.abandoned.length > 0) {
      writeLine(context.stderr, `Recovered runs of stopped processes: ${recovered.resumed.length} resumed, ${recovered.abandoned.length} abandoned.`);
    }
    // Said before the server is ready, so nothing waits on the sandbox's probe once requests come.
    await warnAtStart(
      context,
      runtime.agents.errors.map((error) => error.message),
      runtime.sandbox,
    );
    const dashboard = await startDashboard({
      cadre: runtime.cadre,
      host: flags.host,
      port,
      sandbox: runtime.sandbox,
      logger: runtime.logger,
      workspace: { state: runtime.workspace.state, leftOut: leftOut(runtime.workspace).map((item) => describeItem(item)) },
    }).catch((error: NodeJS.ErrnoException) => {
      // A usage problem (exit 2) with the way out, not an internal error.
      if (error.code === 'EADDRINUSE') throw new ConfigError(`port ${port} is in use on ${flags.host}; pass --port N (or --port 0 for any free port).`);
      if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
        throw new ConfigError(`cannot listen on ${flags.host}: it is not an address of this machine; pass --host ADDRESS.`);
      throw error;
    });
    if (flags.json) writeLine(context.stdout, JSON.stringify({ type: 'serve-ready', url: dashboard.url, token: dashboard.token }));
    else writeLine(context.stdout, `cadre dashboard: ${dashboard.url}`);
    if (dashboard.token !== null && !flags.json) {
      writeLine(context.stdout, `Access token: ${dashboard.token}`);
      writeLine(context.stdout, 'Every request needs it (Authorization: Bearer <token>, or ?token= in the page address). Keep it secret.');
    }
    if (isWildcardHost(flags.host) && !flags.json) {
      writeLine(context.stdout, `Listening on every address (${flags.host}): from another machine, use this machine's address with the same ?token=.`);
    }
    if (config.model === undefined) writeLine(context.stderr, 'No model is configured (--model or CADRE_MODEL): new sessions and messages will fail.');
    writeLine(context.stderr, 'Press Ctrl-C to stop.');
    // A store that stops taking writes (a full disk, a deleted database) ends the server too, saying why.
    const failed = new Promise<StoreFailureError>((resolve) => runtime.store.onFailure?.(resolve));
    const failure = await Promise.race([untilStopped(signal).then(() => null), failed]);
    await dashboard.close();
    if (failure === null) return 0;
    writeLine(context.stderr, `cadre: ${failure.message}`);
    return 1;
  } finally {
    await runtime.close();
  }
}

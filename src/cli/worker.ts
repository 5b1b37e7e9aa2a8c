import { ConfigError } from '../errors/config-error.ts';
import { StoreFailureError } from '../store/store-failure-error.ts';
import { redactConnectionString } from '../store/redact-connection-string.ts';
import { redactSecrets } from '../store/redact-secrets.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import { cliLogger } from './cli-logger.ts';
import { configFlags, type RuntimeFlags } from './command-options.ts';
import { agentPlacesOf, cliSandbox, mcpServersOf } from './open-runtime.ts';
import { announceWorkspaceTrust, workspaceTrust } from './workspace-trust-lines.ts';
import { untilStopped } from './until-stopped.ts';

/** Options of `cadre worker`. */
export interface WorkerFlags extends RuntimeFlags {
  queue?: string;
  concurrency?: string;
}

/** The value of `--concurrency N`: a whole number from 1 to 1000. */
function parseConcurrency(value: string | undefined): number {
  if (value === undefined) return 10;
  const concurrency = Number(value);
  if (!/^\d+$/.test(value.trim()) || concurrency < 1 || concurrency > 1000)
    throw new ConfigError(`--concurrency must be a whole number from 1 to 1000, not '${value}'.`);
  return concurrency;
}

/**
 * `cadre worker`: carries out runs that hosts (`cadre run`, `serve`, `mcp`) put on the queue, for
 * the workspace it is started in (its working directory), with its configuration, agents and
 * keys, until Ctrl-C. On the way out its runs go back to the queue for another worker.
 */
export async function workerCommand(context: CliContext, flags: WorkerFlags, signal?: AbortSignal): Promise<number> {
  const concurrency = parseConcurrency(flags.concurrency);
  const logger = cliLogger(context, flags, redactSecrets, 'info');
  const [{ loadConfig }, { loadAgents, agentFilesVersion }, { createCadreWorker }, { createWorkspaceTools }, { openStore }, { createSandbox }] =
    await Promise.all([
      import('../config/load-config.ts'),
      import('../agents/load-agents.ts'),
      import('../runtime/create-cadre-worker.ts'),
      import('../tools/workspace-tools.ts'),
      import('../store/open-store.ts'),
      import('../tools/sandbox/create-sandbox.ts'),
    ]);
  const config = await loadConfig({
    cwd: context.cwd,
    env: context.env,
    home: context.env.HOME,
    configFile: flags.config,
    flags: { ...configFlags(flags), queue: flags.queue },
  });
  const agentPlaces = agentPlacesOf(context, flags, config);
  const agents = await loadAgents(agentPlaces);
  const mcp = await mcpServersOf(context, flags, config, false);
  announceWorkspaceTrust(context, workspaceTrust(context.cwd, [config.workspace, mcp.grant, agents.workspace]));
  if (config.queue === undefined)
    throw new ConfigError(
      'cadre worker needs a queue: pass --queue redis://HOST:6379, set CADRE_QUEUE, or set "queue" in cadre.config.json (the hosts use the same).',
    );
  if (config.db === ':memory:')
    throw new ConfigError('cadre worker needs the database its hosts use (--db postgres://... or a SQLite file on this machine), not :memory:.');
  const store = await openStore(config.db);
  try {
    const sandbox = cliSandbox(createSandbox, context, flags, config);
    const tools = createWorkspaceTools({ root: context.cwd, storeFiles: store.files, sandbox });
    const worker = await createCadreWorker({
      store,
      queue: config.queue,
      concurrency,
      workspace: context.cwd,
      // Runs carry their sessions' models; this one only fills the slot when none is configured.
      model: config.model ?? 'none:unconfigured',
      agents,
      // Each run uses the agents as their files are when it starts (edited, added or removed since).
      reloadAgents: () => loadAgents(agentPlaces),
      agentsVersion: () => agentFilesVersion(agentPlaces),
      limits: config.limits,
      tools,
      modelAliases: config.modelAliases,
      permissions: config.permissions,
      summarize: config.summarize,
      tracing: config.telemetry,
      mcpServers: mcp.servers,
      baseURL: config.baseURL,
      env: context.env,
      logger,
      onError: (error: unknown) => {
        if (!StoreFailureError.isInstance(error)) logger.error({ err: error }, 'internal error');
      },
    });
    const queue = redactConnectionString(config.queue);
    if (flags.json) writeLine(context.stdout, JSON.stringify({ type: 'worker-ready', name: worker.name, workspace: worker.workspace, queue, concurrency }));
    writeLine(
      context.stderr,
      `cadre worker ${worker.name}: carrying out runs in ${worker.workspace} from ${queue} (${concurrency} at once). Press Ctrl-C to stop.`,
    );
    for (const error of agents.errors) writeLine(context.stderr, `cadre: warning: ${error.message}`);
    const failed = new Promise<StoreFailureError>((resolve) => store.onFailure?.(resolve));
    const failure = await Promise.race([untilStopped(signal).then(() => null), failed]);
    writeLine(context.stderr, `cadre worker ${worker.name}: stopping; runs under way go back to the queue.`);
    await worker.close();
    if (failure === null) return 0;
    writeLine(context.stderr, `cadre: ${failure.message}`);
    return 1;
  } finally {
    await store.close().catch((error: unknown) => {
      if (!StoreFailureError.isInstance(error)) throw error;
    });
  }
}

import { existsSync } from 'node:fs';
import type { ToolSet } from 'ai';
import { isAbsolute, join } from 'node:path';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { ApprovalMode, Approver } from '../approvals/approval-broker.ts';
import { configLocations, databaseFromFlagsAndEnv } from '../config/config-locations.ts';
import type { CadreConfig } from '../config/load-config.ts';
import { ConfigError } from '../errors/config-error.ts';
import { StoreFailureError } from '../store/store-failure-error.ts';
import type { LanguageModelInstance } from '../models/resolve-model.ts';
import type { Cadre } from '../runtime/create-cadre.ts';
import type { ProjectMcpServers } from '../mcp/client/project-mcp-servers.ts';
import type { McpServerEntry } from '../mcp/client/mcp-clients.ts';
import type { Store } from '../store/store.ts';
import type { Sandbox } from '../tools/sandbox/create-sandbox.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import { configFlags, type RuntimeFlags, type StoreFlags } from './command-options.ts';
import { cliLogger } from './cli-logger.ts';
import { redactSecrets } from '../store/redact-secrets.ts';
import type { Logger, LogLevel } from '../logging/logger.ts';
import type { LoadAgentsOptions } from '../agents/load-agents.ts';
import { trustedForCommand, type WorkspaceGrant } from '../config/workspace-trust.ts';
import { announceWorkspaceTrust, workspaceTrust, type WorkspaceTrust } from './workspace-trust-lines.ts';

/** What a command needs to talk to the database only. */
/** What a command that only reads or stops needs of the configuration. */
export interface StoreConfig {
  db: string;
  /** The token budgets in force, to show runs against them; none without a config file. */
  limits: Pick<Partial<CadreConfig['limits']>, 'maxTokensPerRun' | 'maxTokensPerSession'>;
}

export interface OpenedStore {
  config: StoreConfig;
  store: Store;
  close(): Promise<void>;
}

/** A cadre runtime opened for one command. */
export interface OpenedRuntime extends OpenedStore {
  config: CadreConfig;
  cadre: Cadre;
  agents: AgentRegistry;
  /** The workspace tools agents may name in their allow-list. */
  toolNames: string[];
  /** The OS sandbox `bash` runs in, as `sandbox` in the configuration says. */
  sandbox: Sandbox;
  /** The runtime's tools: what agents without a `tools` list get. */
  tools: ToolSet;
  /** The command's logger (stderr; `--log-level`). */
  logger: Logger;
  /** Whether the workspace's own configuration is trusted, and what of it was left out. */
  workspace: WorkspaceTrust;
}

/** Options of {@link openRuntime}. */
export interface OpenRuntimeOptions {
  context: CliContext;
  flags: RuntimeFlags;
  /** Whether the command runs agents, so a model must be configured. Commands that only read or stop don't. */
  requireModel: boolean;
  /** Whether a missing database file is created; when not, it opens as an empty database. @default true */
  createDatabase?: boolean;
  /** What happens to asks for approval (see `CadreOptions.approvals`). @default 'deny' without an approver */
  approvals?: ApprovalMode;
  /** Asks a person on this terminal. */
  approver?: Approver;
  /** The level without `--log-level` or `CADRE_LOG_LEVEL`. @default 'warn' */
  logLevel?: LogLevel;
  /** Where a warning line for the person goes, such as an MCP server that failed to start. @default stderr */
  onWarning?: (line: string) => void;
}

/**
 * Reads configuration: flags beat the environment, which beats the project's `cadre.config.json`
 * (or `--config`, `CADRE_CONFIG`), which beats the user's `$XDG_CONFIG_HOME/cadre/config.json`.
 */
export async function loadCliConfig(context: CliContext, flags: RuntimeFlags): Promise<CadreConfig> {
  // Loaded when used: validating a config file needs zod, which `cadre runs` without one can skip.
  const { loadConfig } = await import('../config/load-config.ts');
  return loadConfig({ cwd: context.cwd, env: context.env, home: context.env.HOME, configFile: flags.config, flags: configFlags(flags) });
}

/**
 * The database of a command that only reads or stops. Without any config file it comes from
 * `--db`, `CADRE_DB` or the default, with no validation library loaded, so such commands start fast.
 */
async function storeConfig(context: CliContext, flags: StoreFlags): Promise<StoreConfig> {
  const locations = configLocations({ cwd: context.cwd, configFile: flags.config, env: context.env, home: context.env.HOME });
  if (locations.projectNamedBy !== null || existsSync(locations.project) || existsSync(locations.user)) return loadCliConfig(context, flags);
  // Budgets are set only in a config file, so without one there are none to show.
  return { db: databaseFromFlagsAndEnv(context.cwd, flags.db, context.env) ?? join(context.cwd, '.cadre', 'cadre.db'), limits: {} };
}

/**
 * The store spec for a command that only reads or stops: a database file that does not exist
 * reads as an empty database, so a mistyped `--db` creates no file and no folder.
 */
function existingDatabase(db: string): string {
  return isAbsolute(db) && !existsSync(db) ? ':memory:' : db;
}

/** Closes the store; a store that failed has said so already (the command reports it once). */
async function closeStore(store: Store): Promise<void> {
  await store.close().catch((error: unknown) => {
    if (!StoreFailureError.isInstance(error)) throw error;
  });
}

/**
 * Opens the configured database for a command that reads it, or answers an ask (a missing file
 * is not created). A database this process cannot write is read read-only, with a warning when
 * rows may be missing; a command that `writes` is refused instead, with a message saying so.
 */
export async function openCliStore(context: CliContext, flags: StoreFlags, { writes = false }: { writes?: boolean } = {}): Promise<OpenedStore> {
  const config = await storeConfig(context, flags);
  const { openStore } = await import('../store/open-store.ts');
  const store = await openStore(existingDatabase(config.db), {
    readOnly: !writes,
    onWarning: (message) => writeLine(context.stderr, `cadre: warning: ${message}`),
  });
  return { config, store, close: () => closeStore(store) };
}

async function sessionModel(config: CadreConfig, env: CliContext['env']): Promise<LanguageModelInstance> {
  if (config.model === undefined) {
    throw new ConfigError(
      'No model is configured: pass --model provider:model-id (like anthropic:claude-sonnet-4-5) or set CADRE_MODEL. ' +
        'To try cadre without a key, run a scripted model: npx cadre-scripted-server --script FILE.yaml (see docs/testing.md of the cadre package).',
    );
  }
  const [{ resolveModel }, { resolveModelAlias }] = await Promise.all([import('../models/resolve-model.ts'), import('../config/model-aliases.ts')]);
  return resolveModel(resolveModelAlias(config.model, config.modelAliases), { baseURL: config.baseURL, env });
}

/**
 * The sandbox of the configuration for commands run in `context.cwd`: besides the database, the
 * config files that were or could be read stay read-only inside the box, and so do the user's
 * agent files where a writable place holds them.
 */
export function cliSandbox(
  create: typeof import('../tools/sandbox/create-sandbox.ts').createSandbox,
  context: CliContext,
  flags: RuntimeFlags,
  config: CadreConfig,
): Sandbox {
  const locations = configLocations({ cwd: context.cwd, configFile: flags.config, env: context.env, home: context.env.HOME });
  return create({
    root: context.cwd,
    ...config.sandbox,
    db: config.db,
    readOnly: [locations.project, locations.user, join(locations.userDirectory, 'agents'), ...config.agentsDirs],
  });
}

/** Where a command loads its agents: the configuration's folders, which of them are the workspace's, and `--trust`. */
export function agentPlacesOf(context: CliContext, flags: RuntimeFlags, config: CadreConfig): LoadAgentsOptions {
  return {
    cwd: context.cwd,
    home: context.env.HOME,
    env: context.env,
    dirs: config.agentsDirs,
    workspaceDirs: config.workspace.agentsDirs,
    trust: trustedForCommand(flags.trust, context.env),
  };
}

/**
 * The MCP servers of the configuration, and those of the project's `.mcp.json` a person trusted
 * (`cadre trust`, `cadre mcp trust`, or `--trust` for this command); the configuration wins on
 * equal names. The others are never started; `grant` says what they are, for the one line about
 * what the workspace left out. Problems of the file are said on stderr when `announce`.
 */
export async function mcpServersOf(
  context: CliContext,
  flags: RuntimeFlags,
  config: CadreConfig,
  announce: boolean,
): Promise<{ servers: Record<string, McpServerEntry>; grant: WorkspaceGrant; project: ProjectMcpServers | null }> {
  const { readProjectMcpServers } = await import('../mcp/client/project-mcp-servers.ts');
  const { userDirectory } = configLocations({ cwd: context.cwd, configFile: flags.config, env: context.env, home: context.env.HOME });
  const project = await readProjectMcpServers({
    cwd: context.cwd,
    userConfigDirectory: userDirectory,
    env: context.env,
    once: trustedForCommand(flags.trust, context.env),
  });
  const servers: Record<string, McpServerEntry> = {};
  for (const server of project?.servers ?? []) {
    if (server.trust === 'trusted') servers[server.name] = { config: server.config, source: '.mcp.json' };
  }
  for (const [name, server] of Object.entries(config.mcpServers)) servers[name] = { config: server, source: config.configPath ?? 'configuration' };
  if (announce && project && project.problems.length > 0) context.stderr.write(`cadre: ${project.path}: ${project.problems.join('; ')}\n`);
  return { servers, grant: project?.grant ?? { part: '.mcp.json', items: [], hash: null, state: 'none' }, project };
}

/**
 * Opens everything a command needs: configuration, the database, the agents (built-ins,
 * `~/.config/cadre/agents`, `./.cadre/agents`, each `--agents DIR`), the workspace tools rooted at
 * the working directory, and the runtime. Checks the model and the primary agent before anything
 * runs, so a mistake is one clear {@link ConfigError}.
 */
export async function openRuntime({
  context,
  flags,
  requireModel,
  createDatabase = true,
  approvals,
  approver,
  logLevel,
  onWarning,
}: OpenRuntimeOptions): Promise<OpenedRuntime> {
  // Lines logged before the runtime exists are redacted by pattern; after, by its redactor too.
  let redactLine = redactSecrets;
  const logger = cliLogger(context, flags, (text) => redactLine(text), logLevel);
  // Loaded here, not at the top: commands that only read the database start faster without the AI SDK.
  const [{ loadAgents }, { createCadre }, { createWorkspaceTools }, { openStore }, { createSandbox }] = await Promise.all([
    import('../agents/load-agents.ts'),
    import('../runtime/create-cadre.ts'),
    import('../tools/workspace-tools.ts'),
    import('../store/open-store.ts'),
    import('../tools/sandbox/create-sandbox.ts'),
  ]);
  const config = await loadCliConfig(context, flags);
  const agents = await loadAgents(agentPlacesOf(context, flags, config));
  const mcp = await mcpServersOf(context, flags, config, requireModel);
  const workspace = workspaceTrust(context.cwd, [config.workspace, mcp.grant, agents.workspace]);
  // Before the model: a setting left out (a baseURL) may be why there is none.
  announceWorkspaceTrust(context, workspace);
  const model = requireModel ? await sessionModel(config, context.env) : undefined;
  if (requireModel) agents.primary(config.agent);
  const store = await openStore(createDatabase ? config.db : existingDatabase(config.db));
  const sandbox = cliSandbox(createSandbox, context, flags, config);
  // The tools never open the database's files: that would drop this process's SQLite locks.
  const tools = createWorkspaceTools({ root: context.cwd, storeFiles: store.files, sandbox });
  const onError = (error: unknown) => {
    // The command ends with it, and says it once (see runCommand).
    if (StoreFailureError.isInstance(error)) return;
    logger.error({ err: error }, 'internal error');
  };
  // Signals between processes: LISTEN/NOTIFY on Postgres, polling the file otherwise.
  const { openCoordination } = await import('../coordination/open-coordination.ts');
  const coordination = await openCoordination(config.db, store, onError, config.queue).catch(async (error: unknown) => {
    await closeStore(store);
    throw error;
  });
  const mcpServers = mcp.servers;
  const cadre = createCadre({
    store,
    coordination,
    // Commands that only stop runs never call a model; the label just fills the slot.
    model: model ?? config.model ?? 'none:unconfigured',
    agents,
    limits: config.limits,
    tools,
    modelAliases: config.modelAliases,
    permissions: config.permissions,
    summarize: config.summarize,
    tracing: config.telemetry,
    mcpServers,
    harnesses: config.harnesses,
    approvals,
    approver,
    workspace: context.cwd,
    worktree: config.worktree,
    ...(config.queue === undefined ? {} : { queue: config.queue }),
    baseURL: config.baseURL,
    env: context.env,
    logger,
    onError,
    // The model is told with its prompt; the person is told here, once per server.
    onMcpServerFailure: (failure) => (onWarning ?? ((line) => writeLine(context.stderr, line)))(`cadre: warning: ${failure.message}`),
  });
  redactLine = (text) => cadre.redactor.redact(text);
  return {
    config,
    store,
    cadre,
    agents,
    toolNames: Object.keys(tools),
    sandbox,
    tools,
    logger,
    workspace,
    async close() {
      await cadre.close();
      await coordination.close();
      await closeStore(store);
    },
  };
}

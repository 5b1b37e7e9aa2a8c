import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors/index.ts';
import { configLocations, defaultConfigFileName, given, resolveDatabase } from './config-locations.ts';
import { resolveLimits, type Limits } from './limits.ts';
import { defaultModelAliases } from './model-aliases.ts';
import { readConfigFile, type ConfigFile } from './read-config-file.ts';
import { resolveSandboxConfig, type SandboxConfig } from './sandbox-config.ts';
import type { McpServerConfig } from './mcp-servers-config.ts';
import { compilePermissions, type PermissionsConfig } from '../permissions/permissions.ts';
import { lowerLimits, splitWorkspaceConfig } from './workspace-config.ts';
import { grantApplies, grantHash, partState, readWorkspaceTrust, trustedForCommand, type WorkspaceGrant } from './workspace-trust.ts';

export { defaultConfigFileName };

/** The command-line flags that take part in configuration. */
export interface ConfigFlags {
  /** `--model SPEC`. */
  model?: string;
  /** `--base-url URL`. */
  baseURL?: string;
  /** `--db PATH|postgres://...`; a relative path resolves against `cwd`. */
  db?: string;
  /** `--queue redis://...`: runs execute on `cadre worker` processes. */
  queue?: string;
  /** `--agent NAME`: the primary agent. */
  agent?: string;
  /** `--agents DIR`, in order; relative paths resolve against `cwd`. */
  agentsDirs?: string[];
  /** `--allow RULE`, in order: permission rules added to the file's `permissions.allow`. */
  allow?: string[];
  /** `--deny RULE`, in order: permission rules added to the file's `permissions.deny`. */
  deny?: string[];
  /** `--trust`: the workspace's own configuration applies for this command, trusted or not (also `CADRE_TRUST=1`). @default false */
  trust?: boolean;
}

/**
 * The working directory's own `cadre.config.json` as trust sees it (docs/security.md): what
 * of it needs a person's trust, and whether it applied. A file named by `--config` or
 * `CADRE_CONFIG` is the person's: then `path` is null and `state` is `none`.
 */
export interface WorkspaceConfig extends WorkspaceGrant {
  part: 'cadre.config.json';
  /** The workspace's config file, or null when none was read as the workspace's. */
  path: string | null;
  /** Absolute directories its `agents` key names: agent files there are the workspace's too. */
  agentsDirs: string[];
}

/** Where {@link loadConfig} looks. */
export interface LoadConfigOptions {
  /** The working directory: where `cadre.config.json` and the default database live. */
  cwd: string;
  /** `--config FILE`; it must exist. @default `CADRE_CONFIG`, else `<cwd>/cadre.config.json` when present */
  configFile?: string;
  /** The home directory, for the user's `~/.config/cadre/config.json` (or under `XDG_CONFIG_HOME`). @default os.homedir() */
  home?: string;
  /** Flags, which beat the environment and the file. @default {} */
  flags?: ConfigFlags;
  /** The environment, which beats the file. @default process.env */
  env?: Record<string, string | undefined>;
}

/** Settings for summarizing results; their meaning belongs to delegation. */
export interface SummarizeConfig {
  /** Model spec used to summarize. */
  model?: string;
  /** Whether to summarize at all. */
  enabled?: boolean;
  /** The longest summary, in characters. @default 4000 */
  maxChars?: number;
  /** How long a summary may take before the head/tail cut is used. @default 60000 */
  timeoutMs?: number;
}

/** The `telemetry` key: traces over OTLP; its meaning belongs to the runtime. */
export interface TelemetryConfig {
  /** @default on when `endpoint` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set */
  enabled?: boolean;
  /** The collector's OTLP/HTTP base URL. @default `OTEL_EXPORTER_OTLP_ENDPOINT` */
  endpoint?: string;
  /** @default `OTEL_EXPORTER_OTLP_PROTOCOL`, else 'http/protobuf' */
  protocol?: 'http/json' | 'http/protobuf';
  /** Record message contents and tool inputs/outputs (redacted). @default false */
  recordContent?: boolean;
}

/** The configuration of one cadre process, merged from flags, environment, file and defaults. */
export interface CadreConfig {
  /** The session's model spec. */
  model?: string;
  /** Base URL of the model API. */
  baseURL?: string;
  /** `CADRE_API_KEY` only: a key is never read from the file, because files get committed. */
  apiKey?: string;
  /** Absolute database path, `:memory:`, or a URL like `postgres://...`. @default `<cwd>/.cadre/cadre.db` */
  db: string;
  /**
   * A `redis://` URL: runs execute on `cadre worker` processes through BullMQ (docs/scaling-out.md); absent, they execute in this process. @default none
   */
  queue?: string;
  /** The limits, defaults filled in. */
  limits: Limits;
  /** Permission rules: the file's `permissions` with `--allow` and `--deny` added. @default {} */
  permissions: PermissionsConfig;
  /** How `bash` is confined: the file's `sandbox`, defaults filled in, `writable` paths absolute. @default { mode: 'auto', network: false, writable: [] } */
  sandbox: SandboxConfig;
  /** Summarizing settings from the file. */
  summarize?: SummarizeConfig;
  /** OpenTelemetry settings from the file (`OTEL_EXPORTER_OTLP_ENDPOINT` alone turns traces on too). */
  telemetry?: TelemetryConfig;
  /** Runs' own git worktrees (docs/worktrees.md): the ref their branches are made from. @default { baseRef: 'HEAD' } */
  worktree: { baseRef: string };
  /** MCP servers whose tools agents may use: the user's file's, then the project's (same name: the project's). @default {} */
  mcpServers: Record<string, McpServerConfig>;
  /** Where the agent programs of `harness:` agents are, where not on the PATH (docs/harnesses.md). @default {} */
  harnesses: Partial<Record<'claude-code' | 'codex' | 'opencode', { command: string }>>;
  /** Absolute agent directories: the file's `agents`, then each `--agents` flag. @default [] */
  agentsDirs: string[];
  /** The primary agent's name. @default 'main' */
  agent: string;
  /** Absolute path of the project's config file that was read (else the user's), or null when there was none. */
  configPath: string | null;
  /** Short model names and what they stand for: the defaults (`sonnet`, `opus`, `haiku`), the user's, then the project's. */
  modelAliases: Record<string, string>;
  /**
   * Whether the workspace's own `cadre.config.json` was trusted, and what of it was left out when
   * not (its `items`, unless `state` is `none`, `trusted` or `once`).
   */
  workspace: WorkspaceConfig;
}

/** A config file with its paths (`db`, `agents`) made absolute against its own directory. */
function withAbsolutePaths(file: ConfigFile | null, directory: string): ConfigFile | null {
  if (file === null) return null;
  return {
    ...file,
    ...(file.db === undefined ? {} : { db: resolveDatabase(directory, file.db) }),
    ...(file.agents === undefined ? {} : { agents: file.agents.map((agents) => resolve(directory, agents)) }),
    ...(file.sandbox?.writable === undefined ? {} : { sandbox: { ...file.sandbox, writable: file.sandbox.writable.map((path) => resolve(directory, path)) } }),
  };
}

/**
 * The user's file under the project's: the project's keys win, objects (`limits`,
 * `modelAliases`, `summarize`, ...) merge key by key, and `agents` directories add up.
 */
function mergeConfigFiles(user: ConfigFile | null, project: ConfigFile | null): ConfigFile | null {
  if (user === null || project === null) return project ?? user;
  const merged: Record<string, unknown> = { ...user };
  for (const [key, value] of Object.entries(project)) {
    const under = merged[key];
    if (key === 'agents') merged[key] = [...(user.agents ?? []), ...(project.agents ?? [])];
    // The project's rules add to the user's: its empty `deny` must not drop the user's rules.
    else if (key === 'permissions') merged[key] = addRules(user.permissions, project.permissions);
    else if (isPlainObject(under) && isPlainObject(value)) merged[key] = { ...under, ...value };
    else merged[key] = value;
  }
  return merged as ConfigFile;
}

function addRules(user: PermissionsConfig | undefined, project: PermissionsConfig | undefined): PermissionsConfig {
  const merged: PermissionsConfig = {};
  for (const decision of ['allow', 'ask', 'deny'] as const) {
    const rules = [...(user?.[decision] ?? []), ...(project?.[decision] ?? [])];
    if (rules.length > 0) merged[decision] = rules;
  }
  return merged;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkURL(value: string | undefined, source: string) {
  if (value !== undefined && !URL.canParse(value)) {
    throw new ConfigError(`${source} must be a URL like http://localhost:8000/v1`);
  }
  return value;
}

/**
 * Merges configuration; flags beat the environment (`CADRE_MODEL`, `CADRE_BASE_URL`, `CADRE_DB`),
 * which beats the project's file (`--config`, `CADRE_CONFIG` or `./cadre.config.json`), which beats
 * the user's file (`$XDG_CONFIG_HOME/cadre/config.json`, default `~/.config/cadre/config.json`),
 * which beats the defaults. Relative paths in a file resolve against its own directory.
 * @throws {ConfigError} for a missing `--config` or `CADRE_CONFIG` file, invalid JSON, unknown
 * keys or bad values, naming the file and the field.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<CadreConfig> {
  const { flags = {}, env = process.env } = options;
  const cwd = resolve(options.cwd);
  const locations = configLocations({ cwd, configFile: options.configFile, env, home: options.home });
  const configPath = locations.project;
  const projectFile = await readConfigFile(configPath);
  if (projectFile === null && locations.projectNamedBy !== null) {
    throw new ConfigError(`Config file not found: ${configPath} (given with ${locations.projectNamedBy})`);
  }
  const userFile = locations.user === configPath ? null : await readConfigFile(locations.user);
  // Every rule is checked now, so a bad one is a config error naming the rule before anything runs.
  compilePermissions(projectFile?.permissions, configPath);
  // A bad setting is an error whether or not it would apply.
  resolveSandboxConfig(projectFile?.sandbox, dirname(configPath), configPath);
  const { applied, workspace } = await workspaceConfigOf(projectFile, userFile, {
    cwd,
    configPath,
    namedBy: locations.projectNamedBy,
    userDirectory: locations.userDirectory,
    once: trustedForCommand(flags.trust, env),
  });
  const file = mergeConfigFiles(withAbsolutePaths(userFile, dirname(locations.user)), withAbsolutePaths(applied, dirname(configPath)));
  const fileDirectory = dirname(configPath);

  const fileDatabase = file?.db === undefined ? undefined : resolveDatabase(fileDirectory, file.db);
  const overrideDatabase = given(flags.db) ?? given(env.CADRE_DB);
  const db = overrideDatabase === undefined ? fileDatabase : resolveDatabase(cwd, overrideDatabase);

  const permissions = mergePermissions(file?.permissions, flags);
  compilePermissions(file?.permissions, configPath);
  compilePermissions({ allow: flags.allow }, '--allow');
  compilePermissions({ deny: flags.deny }, '--deny');

  return {
    model: given(flags.model) ?? given(env.CADRE_MODEL) ?? file?.model,
    baseURL: checkURL(given(flags.baseURL), '--base-url') ?? checkURL(given(env.CADRE_BASE_URL), 'CADRE_BASE_URL') ?? file?.baseURL,
    apiKey: given(env.CADRE_API_KEY),
    db: db ?? join(cwd, '.cadre', 'cadre.db'),
    ...queueOf(given(flags.queue), given(env.CADRE_QUEUE), file?.queue),
    limits: resolveLimits(file?.limits),
    permissions,
    sandbox: resolveSandboxConfig(file?.sandbox, fileDirectory, configPath),
    summarize: file?.summarize,
    telemetry: file?.telemetry,
    worktree: { baseRef: file?.worktree?.baseRef ?? 'HEAD' },
    mcpServers: { ...file?.mcpServers },
    harnesses: { ...file?.harnesses },
    agentsDirs: [
      ...(file?.agents ?? []).map((directory) => resolve(fileDirectory, directory)),
      ...(flags.agentsDirs ?? []).map((directory) => resolve(cwd, directory)),
    ],
    agent: given(flags.agent) ?? 'main',
    configPath: projectFile !== null ? configPath : userFile !== null ? locations.user : null,
    modelAliases: { ...defaultModelAliases, ...file?.modelAliases },
    workspace,
  };
}

/**
 * The project file as it applies, and the workspace's standing: a file named by `--config` or
 * `CADRE_CONFIG` applies whole; the working directory's own applies whole only once a person
 * trusted what of it needs trust (or `--trust`), else only what narrows (limits the lower of its
 * and the user's).
 */
async function workspaceConfigOf(
  projectFile: ConfigFile | null,
  userFile: ConfigFile | null,
  where: { cwd: string; configPath: string; namedBy: string | null; userDirectory: string; once: boolean },
): Promise<{ applied: ConfigFile | null; workspace: WorkspaceConfig }> {
  if (projectFile === null || where.namedBy !== null) {
    return { applied: projectFile, workspace: { part: 'cadre.config.json', path: null, items: [], hash: null, state: 'none', agentsDirs: [] } };
  }
  const split = splitWorkspaceConfig(projectFile);
  const hash = split.grant === null ? null : grantHash(split.grant);
  const record = hash === null ? null : await readWorkspaceTrust({ cwd: where.cwd, userConfigDirectory: where.userDirectory });
  const state = partState(hash, record?.parts['cadre.config.json'], where.once);
  const agentsDirs = (projectFile.agents ?? []).map((directory) => resolve(dirname(where.configPath), directory));
  const workspace: WorkspaceConfig = { part: 'cadre.config.json', path: where.configPath, items: split.items, hash, state, agentsDirs };
  if (grantApplies(state)) return { applied: projectFile, workspace };
  const limits = lowerLimits(split.narrowing.limits, userFile?.limits);
  return { applied: { ...split.narrowing, ...(limits === undefined ? {} : { limits }) }, workspace };
}

/** The queue URL: the flag, else `CADRE_QUEUE`, else the file's (checked there already); absent when none is set. */
function queueOf(flag: string | undefined, env: string | undefined, file: string | undefined): { queue?: string } {
  const [value, source] = flag !== undefined ? [flag, '--queue'] : env !== undefined ? [env, 'CADRE_QUEUE'] : [file, 'queue'];
  if (value === undefined) return {};
  if (!/^rediss?:\/\//i.test(value))
    throw new ConfigError(`${source} must be a redis:// URL like redis://127.0.0.1:6379, not '${value.replace(/\/\/[^@/]*@/, '//')}'.`);
  return { queue: value };
}

/** The file's rules with the flags' added; at equal specificity deny still beats allow. */
function mergePermissions(file: PermissionsConfig | undefined, flags: ConfigFlags): PermissionsConfig {
  const merged: PermissionsConfig = {};
  const allow = [...(file?.allow ?? []), ...(flags.allow ?? [])];
  const deny = [...(file?.deny ?? []), ...(flags.deny ?? [])];
  if (allow.length > 0) merged.allow = allow;
  if (file?.ask && file.ask.length > 0) merged.ask = [...file.ask];
  if (deny.length > 0) merged.deny = deny;
  return merged;
}

import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { ApprovalMode, Approver } from '../approvals/approval-broker.ts';
import { loadConfig, type CadreConfig } from '../config/load-config.ts';
import { ConfigError } from '../errors/config-error.ts';
import type { LanguageModelInstance } from '../models/resolve-model.ts';
import type { Cadre } from '../runtime/create-cadre.ts';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import type { CliContext } from './cli-context.ts';
import { configFlags, type RuntimeFlags, type StoreFlags } from './command-options.ts';

/** What a command needs to talk to the database only. */
export interface OpenedStore {
  config: CadreConfig;
  store: Store;
  close(): Promise<void>;
}

/** A cadre runtime opened for one command. */
export interface OpenedRuntime extends OpenedStore {
  cadre: Cadre;
  agents: AgentRegistry;
  /** The workspace tools agents may name in their allow-list. */
  toolNames: string[];
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
}

/** Reads configuration: flags beat the environment, which beats `cadre.config.json`. */
export function loadCliConfig(context: CliContext, flags: RuntimeFlags): Promise<CadreConfig> {
  return loadConfig({ cwd: context.cwd, env: context.env, configFile: flags.config, flags: configFlags(flags) });
}

/**
 * The store spec for a command that only reads or stops: a database file that does not exist
 * reads as an empty database, so a mistyped `--db` creates no file and no folder.
 */
function existingDatabase(db: string): string {
  return isAbsolute(db) && !existsSync(db) ? ':memory:' : db;
}

/** Opens the configured database, for commands that only read it (a missing file is not created). */
export async function openCliStore(context: CliContext, flags: StoreFlags): Promise<OpenedStore> {
  const config = await loadCliConfig(context, flags);
  const store = await openStore(existingDatabase(config.db));
  return { config, store, close: () => store.close() };
}

async function sessionModel(config: CadreConfig, env: CliContext['env']): Promise<LanguageModelInstance> {
  if (config.model === undefined) {
    throw new ConfigError(
      'No model is configured: pass --model provider:model-id (like anthropic:claude-sonnet-4-5) or set CADRE_MODEL. ' +
        'To try cadre without a key, run `npm run demo` (a scripted model).',
    );
  }
  const { resolveModel } = await import('../models/resolve-model.ts');
  return resolveModel(config.model, { baseURL: config.baseURL, env });
}

/**
 * Opens everything a command needs: configuration, the database, the agents (built-ins,
 * `~/.config/cadre/agents`, `./.cadre/agents`, each `--agents DIR`), the workspace tools rooted at
 * the working directory, and the runtime. Checks the model and the primary agent before anything
 * runs, so a mistake is one clear {@link ConfigError}.
 */
export async function openRuntime({ context, flags, requireModel, createDatabase = true, approvals, approver }: OpenRuntimeOptions): Promise<OpenedRuntime> {
  // Loaded here, not at the top: commands that only read the database start faster without the AI SDK.
  const [{ loadAgents }, { createCadre }, { createWorkspaceTools }] = await Promise.all([
    import('../agents/load-agents.ts'),
    import('../runtime/create-cadre.ts'),
    import('../tools/workspace-tools.ts'),
  ]);
  const config = await loadCliConfig(context, flags);
  const model = requireModel ? await sessionModel(config, context.env) : undefined;
  const agents = await loadAgents({ cwd: context.cwd, dirs: config.agentsDirs });
  if (requireModel) agents.primary(config.agent);
  const store = await openStore(createDatabase ? config.db : existingDatabase(config.db));
  const tools = createWorkspaceTools({ root: context.cwd });
  const cadre = createCadre({
    store,
    // Commands that only stop runs never call a model; the label just fills the slot.
    model: model ?? config.model ?? 'none:unconfigured',
    agents,
    limits: config.limits,
    tools,
    permissions: config.permissions,
    approvals,
    approver,
    baseURL: config.baseURL,
    env: context.env,
    onError: (error) => {
      const detail = error instanceof Error ? (flags.debug ? (error.stack ?? error.message) : error.message) : String(error);
      context.stderr.write(`cadre: internal error: ${detail}\n`);
    },
  });
  return {
    config,
    store,
    cadre,
    agents,
    toolNames: Object.keys(tools),
    async close() {
      await cadre.close();
      await store.close();
    },
  };
}

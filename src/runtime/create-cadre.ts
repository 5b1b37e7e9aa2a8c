import { hostname } from 'node:os';
import type { LanguageModel, TelemetryOptions, ToolSet } from 'ai';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import { AgentRegistry } from '../agents/agent-registry.ts';
import { createApprovalBroker, type ApprovalMode, type Approver } from '../approvals/approval-broker.ts';
import type { AnsweredApproval, ApprovalAnswer } from '../approvals/answer-approval.ts';
import { gateToolCalls, type ToolGateContext } from '../approvals/gate-tools.ts';
import { stopToolCalls } from '../loop/stop-tool-calls.ts';
import type { ToolMiddleware } from '../loop/tool-pipeline.ts';
import { checkToolInput } from '../tools/check-tool-input.ts';
import { redactToolOutput } from '../tools/redact-tool-output.ts';
import { closeOrphanedApprovals } from '../approvals/close-orphaned-approvals.ts';
import { compilePermissions, type DecidedRule, type PermissionsConfig } from '../permissions/permissions.ts';
import { builtInAgents } from '../agents/built-in-agents.ts';
import type { Coordination } from '../coordination/coordination.ts';
import { createPollingCoordination } from '../coordination/polling-coordination.ts';
import { resolveLimits, type Limits } from '../config/limits.ts';
import { defaultModelAliases, resolveAgentModel, resolveModelAlias } from '../config/model-aliases.ts';
import { readToolNames } from '../agents/agent-tool-names.ts';
import { selectAgentTools } from '../agents/tool-selection.ts';
import { createWorkspaceTools } from '../tools/workspace-tools.ts';
import { createDelegationTools } from '../delegation/create-delegation-tools.ts';
import type { DelegationServices } from '../delegation/delegation-services.ts';
import { summarizeResult, type SummarizeSettings } from '../delegation/summarize-result.ts';
import { mcpServerConfigSchema, type McpServerConfig } from '../config/mcp-servers-config.ts';
import { createMcpClients, type McpClients, type McpServerEntry } from '../mcp/client/mcp-clients.ts';
import { serversNamedBy } from '../mcp/client/mcp-tool-name.ts';
import { withNotices } from '../sessions/session-runner.ts';
import type { RunLive, RunSummary } from '../executors/in-process-executor.ts';
import { ConfigError } from '../errors/config-error.ts';
import { createInProcessExecutor } from '../executors/in-process-executor.ts';
import { describeModel } from '../models/describe-model.ts';
import { createProviderGates } from '../models/provider-gates.ts';
import { shareProviderGates, type SharedProviderGates } from '../coordination/share-provider-gates.ts';
import { reliableModel } from '../models/reliable-model.ts';
import { createSecretRedactor, type SecretRedactor } from '../models/secret-redactor.ts';
import { resolveModel, type LanguageModelInstance } from '../models/resolve-model.ts';
import { createRunBus, type CadreListener, type RunBus } from '../runs/run-bus.ts';
import { createRunLedger } from '../runs/run-ledger.ts';
import { createRunManager, type RunExecutor, type RunManager } from '../runs/run-manager.ts';
import type { RunLedger } from '../runs/run-ledger.ts';
import type { StopCause } from '../runs/run-stop.ts';
import { createTokenBudget, type SessionTokens } from '../runs/token-budget.ts';
import { createNotifier } from '../sessions/notifier.ts';
import { createSessionInbox, takeAndStore } from '../sessions/session-inbox.ts';
import { createSessionRunner, type TurnResult } from '../sessions/session-runner.ts';
import type { ApprovalRecord, RunRecord, SessionRecord } from '../store/records.ts';
import { isFinished } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { StoreFailureError } from '../store/store-failure-error.ts';
import { setBounded } from '../util/bounded-map.ts';
import { systemNow, timeSortedId, type NewId, type Now } from '../util/clock.ts';
import { addPruning } from '../util/pruned-set.ts';
import { deliverPendingNotifications } from './deliver-pending-notifications.ts';
import { watchRunsElsewhere } from './watch-runs-elsewhere.ts';
import { createAppNotifications, type CadreNotifications } from '../embed/app-notifications.ts';
import { createAppSessions, isAppSession } from '../embed/app-sessions.ts';
import { createAppTools, type CadreToolsOptions } from '../embed/app-tools.ts';
import { requireAiSdk7 } from '../embed/require-ai-sdk.ts';
import { writeRunParts, type CadreRunPartWriter, type WriteRunPartsOptions } from '../embed/write-run-parts.ts';
import { recoverRuns, type RecoveryReport } from './recover-runs.ts';
import { isStoreFailure, watchStoreFailure } from './watch-store-failure.ts';
import { createSessionWakeups, waitForIdle } from './wait-for-idle.ts';
import { createRuntimeTracing } from '../telemetry/runtime-tracing.ts';
import { defaultLogger } from '../logging/default-logger.ts';
import { errorLogger, type Logger } from '../logging/logger.ts';
import { resolveTelemetry, type TelemetrySettings } from '../telemetry/telemetry-settings.ts';

/** Options of {@link createCadre}. */
export interface CadreOptions {
  store: Store;
  /** The session's default model: a spec like `anthropic:claude-sonnet-4-5`, or an AI SDK model instance. */
  model: string | LanguageModelInstance;
  /** Agents: a loaded registry, or definitions added to the built-ins. @default the built-ins */
  agents?: AgentRegistry | AgentDefinition[];
  /** @default the CONTRACT defaults */
  limits?: Partial<Limits>;
  /**
   * The tools of this runtime: agents without a `tools` list (the built-ins too) get all of them,
   * others those their list names; approvals decide what runs.
   * @default the read tools (`read_file`, `list_files`, `grep`) on the working directory
   */
  tools?: ToolSet;
  /**
   * Short model names agents may use (`model: sonnet`), resolved when a model is made; opencode's
   * `provider/model-id` is read as `provider:model-id` unless named here.
   * @default sonnet, opus and haiku (see `defaultModelAliases`)
   */
  modelAliases?: Record<string, string>;
  /**
   * Permission rules for tool calls (CONTRACT section 10): lists of rules that allow, ask or deny.
   * Calls no rule matches get the defaults: read allow; write, exec and network ask.
   * @example { allow: ['bash(npm test*)'], deny: ['network'] }
   */
  permissions?: PermissionsConfig;
  /**
   * What happens to a call that asks: `ask` the {@link CadreOptions.approver} (answers from
   * elsewhere count too), `wait` for an answer from elsewhere ({@link Cadre.approve}, `cadre
   * approve`, the dashboard), `deny` at once, or `yes` to approve at once. `ask` and `wait` deny
   * after `limits.approvalTimeoutMs`.
   * @default 'ask' with an approver, else 'deny'
   */
  approvals?: ApprovalMode;
  /** Asks a person about one call at a time (a terminal prompt, a chat message); see {@link Approver}. */
  approver?: Approver;
  /** Base URL for `openai-compatible:` specs. */
  baseURL?: string | undefined;
  /** Environment for API keys. @default process.env */
  env?: Record<string, string | undefined>;
  /** @default the system clock */
  now?: Now;
  /** @default time-sortable ids */
  newId?: NewId;
  /** Lease length for crash survival. @default 15000 */
  leaseMs?: number;
  /** Retries of a failed model call; `limits.maxRetries` wins when both are given. @default 2 */
  maxRetries?: number;
  /** The first retry's delay when the provider announces none; it doubles for each further retry. @default 2000 */
  retryDelayMs?: number;
  /**
   * Values to redact besides the environment's keys (`*_API_KEY`, `*_TOKEN`, `*_SECRET`): API
   * keys and header values your code gave a model object. Redacted wherever provider text enters
   * cadre, in tool results and in logs.
   */
  secrets?: Iterable<string>;
  /**
   * The AI SDK's telemetry settings for every agent loop. By default telemetry stays on while
   * anyone could receive it (an integration registered with the SDK's `registerTelemetry`, or a
   * subscriber to its `ai:telemetry` tracing channel, as OpenTelemetry instrumentation does) and
   * is turned off otherwise, since building its events costs 30–40 % of a plain model call with
   * an in-memory model.
   */
  telemetry?: TelemetryOptions;
  /**
   * Whether model text is streamed. `auto` streams while someone watches (a {@link Cadre.subscribe}
   * listener: the terminal view, the dashboard) and otherwise calls the model without streaming,
   * which costs far less CPU per step; activity lines then follow steps instead of sentences.
   * @default 'auto'
   */
  streaming?: 'auto' | 'always' | 'never';
  /** Primary-agent turns of all sessions running at once in this process; more wait. @default 64 */
  maxConcurrentTurns?: number;
  /**
   * Signals between the processes sharing the store (stops, answers to asks, ends of runs,
   * pending notifications, live events). Postgres and Redis engines come with `cadre/postgres`
   * and `cadre/bullmq`. @default polling the store
   */
  coordination?: Coordination;
  /**
   * Summaries instead of cuts (CONTRACT section 11): with `enabled`, a result longer than
   * `limits.maxResultChars` reaches the parent as a model-made summary of at most `maxChars`
   * (default 4000), by `model` (default the parent's model, or the run's own when the parent is
   * driven by a host outside cadre); on failure or after `timeoutMs` (default 60000) the head/tail
   * cut is used. The run keeps the full text. @default no summaries
   */
  summarize?: SummarizeSettings;
  /**
   * MCP servers whose tools agents get (CONTRACT section 12), in the format Claude Desktop and
   * Claude Code use: `{ command, args, env }` or `{ type: 'http', url, headers }`. Their tools are
   * named `mcp__<server>__<tool>`, risk `network` (or `read` when the server marks a tool
   * `readOnlyHint`). A server starts when a run first needs it, is shared, and closes with
   * {@link Cadre.close}; one that fails is reported and the others go on.
   * @example { github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] } }
   */
  mcpServers?: Record<string, McpServerConfig | McpServerEntry>;
  /**
   * A `redis://` URL (with an optional `?prefix=NAME`): runs execute on `cadre worker` processes
   * (or {@link createCadreWorker}) through BullMQ, against this store, which must then be shared
   * (Postgres, or a SQLite file on one machine). This runtime still schedules them, with the same
   * caps and order, and sees their events (through `coordination`, which should then be
   * `createRedisCoordination` of `cadre/bullmq`). Needs the `bullmq` and `ioredis` packages,
   * loaded only then. @default runs execute in this process
   */
  queue?: string;
  /**
   * The workspace runs work in, carried by each queued run: only a worker serving that folder
   * takes it. @default the working directory
   */
  workspace?: string;
  /** Where internal errors go. @default `logger.error`, with the error's cause chain */
  onError?: (error: unknown) => void;
  /**
   * Where cadre's structured logs go: a pino logger, or anything with its methods
   * (`createLogger` makes one). @default warnings and errors to stderr, JSON lines off a terminal
   */
  logger?: Logger;
  /**
   * OpenTelemetry traces over OTLP (the configuration's `telemetry` key): a span per primary turn
   * and run (`cadre.run.id`, `cadre.session.id`, `cadre.agent`, `cadre.parent_run.id`), with the AI
   * SDK's model-call and tool-call spans under them. The OpenTelemetry packages load only when it
   * is on. @default on when `OTEL_EXPORTER_OTLP_ENDPOINT` is set in `env`, contents left out
   * @example { endpoint: 'http://localhost:4318', protocol: 'http/json' }
   */
  tracing?: TelemetrySettings;
}

/**
 * What MCP server definitions hold that must never show: header values (and a bearer token on its
 * own) and environment values, as the keys they usually are.
 */
function mcpSecrets(servers: CadreOptions['mcpServers']): string[] {
  const values: string[] = [];
  for (const entry of Object.values(servers ?? {})) {
    const config = 'config' in entry ? entry.config : entry;
    const given = config.type === 'http' ? Object.values(config.headers ?? {}) : Object.values(config.env ?? {});
    for (const value of given) {
      values.push(value);
      const token = /^(?:Bearer|Basic|token)\s+(\S+)$/i.exec(value.trim())?.[1];
      if (token) values.push(token);
    }
  }
  return values.filter((value) => value.trim().length >= 8);
}

/** The read tools on the working directory: what the built-in agents use when no tools are given. */
function defaultTools(store: Store): ToolSet {
  const workspace = createWorkspaceTools({ root: process.cwd(), storeFiles: store.files });
  return Object.fromEntries(readToolNames.filter((name) => workspace[name] !== undefined).map((name) => [name, workspace[name]]));
}

/** The cadre runtime: sessions with a primary agent, runs of subagents, and their lifecycle. */
export interface Cadre {
  readonly store: Store;
  readonly agents: AgentRegistry;
  readonly limits: Limits;
  /** Hides the configured keys and header values (and known credential shapes) in any text. */
  readonly redactor: SecretRedactor;
  /** This process's identity in run leases. */
  readonly ownerId: string;
  /** Starts a conversation with a primary agent. */
  createSession(options?: { agent?: string; model?: string }): Promise<SessionRecord>;
  /** Sends a user message and runs the primary agent's turn. */
  send(sessionId: string, text: string, options?: { signal?: AbortSignal }): Promise<TurnResult>;
  /**
   * Resolves when the session is idle and none of its runs is queued or running (auto-resumes
   * included). Rejects with the store's {@link StoreFailureError} once the store stopped taking
   * writes: the runtime then stopped every turn and run of this process.
   */
  waitForIdle(sessionId: string, options?: { signal?: AbortSignal }): Promise<void>;
  /** A person's stop of a run (and what it started): `canceled_by_user`, from any process. */
  stopRun(runId: string, options?: { cause?: StopCause; reason?: string }): Promise<RunRecord | null>;
  /** A person's stop of a session: its current turn and every active run. */
  stopSession(sessionId: string): Promise<RunRecord[]>;
  /**
   * What a session has spent: its primary agent's own tokens and its runs' (nested included),
   * against `limits.maxTokensPerSession`. A child session counts as the primary session above it.
   */
  sessionTokens(sessionId: string): Promise<SessionTokens>;
  /**
   * A person's answer to an ask for approval, from this process; answers from other processes
   * (`cadre approve`) reach it through the store. Answers an ask once: a later answer changes nothing.
   */
  approve(approvalId: string, answer: ApprovalAnswer): Promise<AnsweredApproval>;
  /** Asks that wait for an answer (of every process using the store), oldest first. */
  pendingApprovals(options?: { sessionId?: string }): Promise<ApprovalRecord[]>;
  /**
   * Finds runs of dead processes and resumes or abandons them, delivers the notifications they
   * owed, and watches runs that go on elsewhere (on workers) to deliver theirs when they end.
   */
  recover(options?: { sessionId?: string }): Promise<RecoveryReport>;
  /**
   * cadre's delegation tools (`agent`, `agent_parallel`, `agent_list`, `agent_output`,
   * `agent_stop`) for your own AI SDK loop (`generateText`, `streamText`, `ToolLoopAgent`), next to
   * your tools. Their runs belong to `sessionId` (your chat's id; made on first use) and have the
   * whole lifecycle; a foreground `agent` call streams its run's progress as preliminary results.
   * Throws a `ConfigError` unless the app's `ai` package is AI SDK 7.
   * @example
   * const result = streamText({ model, messages, tools: { ...myTools, ...cadre.tools({ sessionId: chatId }) } });
   */
  tools(options: CadreToolsOptions): ToolSet;
  /**
   * The notifications of background runs of an app's session: `take` them into your loop (or let
   * `prepareStep` add them before each step), `ack` once you stored your messages, `wait` while idle.
   * cadre never runs a turn of such a session itself. See {@link CadreNotifications} for the contract.
   */
  notifications(sessionId: string): CadreNotifications;
  /**
   * Writes each run of an app's session as a `data-cadre-run` part (id = run id; agent,
   * description, status, activity, usage, parent_run_id, approval) to a UI message stream writer:
   * first every run's current state, then each change, until no run is active (and `loop` has
   * settled) or `signal` aborts. Answer an ask shown on a card with {@link Cadre.approve}.
   */
  writeRunParts(writer: CadreRunPartWriter, options: WriteRunPartsOptions): Promise<void>;
  /** Live events of this process. While anyone listens, model text is streamed (see `streaming`). */
  subscribe(listener: CadreListener): () => void;
  close(): Promise<void>;
}

/**
 * Creates the cadre runtime on a store and a model.
 *
 * @example
 * const cadre = createCadre({ store: createSqliteStore({ path: ':memory:' }), model: 'anthropic:claude-sonnet-4-5' });
 * const session = await cadre.createSession();
 * const turn = await cadre.send(session.id, 'Survey the repository');
 * await cadre.waitForIdle(session.id);
 */
export function createCadre(options: CadreOptions): Cadre {
  requireAiSdk7('cadre');
  const { store } = options;
  const now = options.now ?? systemNow;
  const newId = options.newId ?? timeSortedId;
  const limits = resolveLimits(options.maxRetries === undefined ? options.limits : { maxRetries: options.maxRetries, ...options.limits });
  const redactor = createSecretRedactor({ env: options.env, values: [...(options.secrets ?? []), ...mcpSecrets(options.mcpServers)] });
  const onError = options.onError ?? errorLogger(options.logger ?? defaultLogger());
  // Once the store fails (a full disk, a deleted database), its failure is reported once, and
  // what follows from it (every run's and turn's write rejecting) is not reported again.
  const storeFailure = watchStoreFailure(store, (failure) => {
    onError(redactor.redactError(failure));
    halt();
  });
  const report = (error: unknown) => {
    if (storeFailure.failure && isStoreFailure(error)) return;
    onError(redactor.redactError(error));
  };
  // Every model of this runtime goes through one retry policy, with one 429 gate per provider.
  // One 429 gate per provider, shared with the other processes through the coordination (below).
  let gates: SharedProviderGates;
  const reliable = (model: LanguageModelInstance) =>
    reliableModel(model, { timeoutMs: limits.modelTimeoutMs, maxRetries: limits.maxRetries, retryDelayMs: options.retryDelayMs, redactor, gates });
  let defaultModel: LanguageModel | undefined;
  const agents = options.agents instanceof AgentRegistry ? options.agents : new AgentRegistry([...builtInAgents, ...(options.agents ?? [])]);
  const workspaceTools = options.tools ?? defaultTools(store);
  const aliases = { ...defaultModelAliases, ...options.modelAliases };
  const specOf = (model: string) => resolveModelAlias(model, aliases);
  // An agent's model falls back to the session's when it cannot be had here (`cadre agents` says why).
  const agentModel = (agent: AgentDefinition | undefined) =>
    agent?.model === undefined ? undefined : (resolveAgentModel(agent.model, { aliases, env: options.env }).spec ?? undefined);
  const ownerId = `${hostname()}:${process.pid}:${newId('own').slice(-8)}`;
  const bus = createRunBus({ onListenerError: report });
  const coordination = options.coordination ?? createPollingCoordination({ store, onError: report });
  gates = shareProviderGates(createProviderGates(), coordination);
  const telemetrySettings = resolveTelemetry(options.tracing, options.env);
  const tracing = telemetrySettings ? createRuntimeTracing({ settings: telemetrySettings, store, redact: (text) => redactor.redact(text), telemetry: options.telemetry, onError: report }) : undefined;
  const loopTelemetry = tracing?.loopTelemetry ?? options.telemetry;
  const ledger = createRunLedger({ store, bus, now, coordination, traceContext: tracing?.capture });
  const inbox = createSessionInbox();
  const wakeups = createSessionWakeups(bus);
  const models = new Map<string, LanguageModel>();
  const defaultLabel = typeof options.model === 'string' ? specOf(describeModel(options.model)) : describeModel(options.model);
  const streaming = options.streaming ?? 'auto';
  let watchers = 0;
  const shouldStream = () => streaming === 'always' || (streaming === 'auto' && watchers > 0);

  function modelFor(name: string | undefined): LanguageModel {
    let spec = name === undefined ? undefined : specOf(name);
    if (spec === undefined || spec === defaultLabel) {
      if (typeof options.model !== 'string') return (defaultModel ??= reliable(options.model));
      spec = specOf(options.model);
    }
    let model = models.get(spec);
    if (!model) {
      model = reliable(resolveModel(spec, { baseURL: options.baseURL, env: options.env }));
      models.set(spec, model);
    }
    return model;
  }

  function toolsFor(agent: AgentDefinition, available: ToolSet = workspaceTools): ToolSet {
    // Resolved at each run against the tools this runtime has (MCP servers' too); a listed tool it lacks is left out.
    return selectAgentTools(agent, available).tools;
  }

  const mcp: McpClients = createMcpClients({
    servers: Object.fromEntries(Object.entries(options.mcpServers ?? {}).map(([name, entry]) => [name, 'config' in entry ? entry : { config: entry, source: 'configuration' }])),
    env: options.env,
    clientInfo: { name: 'cadre', version: '0.1.0' },
  });
  /** Per agent: why MCP servers it needs are unavailable (told to the model with its prompt). */
  const mcpNotices = new WeakMap<AgentDefinition, string[]>();

  /** The tools an agent may pick from: the workspace tools and those of the MCP servers it needs (started if need be). */
  async function availableTools(agent: AgentDefinition): Promise<ToolSet> {
    const own = agentMcpServers(agent);
    if (mcp.names.length === 0 && Object.keys(own).length === 0) return workspaceTools;
    const listed = agent.tools.kind === 'list' ? agent.tools.names : null;
    // A server the agent file names (configured elsewhere, or defined inline) is the agent's either way.
    const named = (agent.mcpServers ?? []).map((server) => server.name).filter((name) => mcp.names.includes(name) && !(name in own));
    const { tools, failures } = await mcp.tools([...new Set([...serversNamedBy(listed, mcp.names), ...named])], own);
    mcpNotices.set(agent, failures.map((failure) => `${failure.message} Its tools are not available in this conversation.`));
    return { ...workspaceTools, ...tools };
  }

  /** The servers an agent file defines inline (Claude Code's `mcpServers`), for that agent's runs. */
  function agentMcpServers(agent: AgentDefinition): Record<string, McpServerEntry> {
    const own: Record<string, McpServerEntry> = {};
    for (const server of agent.mcpServers ?? []) {
      if (!server.config) continue;
      const parsed = mcpServerConfigSchema.safeParse(server.config);
      if (parsed.success) own[server.name] = { config: parsed.data, source: `agent ${agent.name}` };
      else report(new ConfigError(`Agent '${agent.name}': MCP server '${server.name}' is not a valid server definition; it is left out.`));
    }
    return own;
  }

  const budget = createTokenBudget({ store, limits });
  const rules = compilePermissions(options.permissions, 'permissions');
  const agentRules = new WeakMap<AgentDefinition, DecidedRule[]>();
  const rulesOfAgent = (agent: AgentDefinition) => {
    let compiled = agentRules.get(agent);
    if (!compiled) agentRules.set(agent, (compiled = compilePermissions(agent.permissions, `agent '${agent.name}'`)));
    return compiled;
  };
  const broker = createApprovalBroker({
    store,
    bus,
    ledger,
    now,
    newId,
    ownerId,
    coordination,
    mode: options.approvals,
    approver: options.approver,
    timeoutMs: limits.approvalTimeoutMs,
    onError: report,
  });

  const redactEntry = redactToolOutput(redactor);
  /**
   * The tool pipeline of an agent's calls, in order: results redacted, input checked, the agent's
   * workspace tools behind the permission rules, and a stopped run's calls ended. (The loop adds
   * its activity watch outermost.)
   */
  function toolPipelineFor(agent: AgentDefinition, workspace: ToolSet, context: Omit<ToolGateContext, 'agent' | 'agentRules'>): ToolMiddleware[] {
    const gate = gateToolCalls(Object.keys(workspace), { ...context, agent: agent.name, agentRules: rulesOfAgent(agent) }, { store, broker, rules, redactor });
    // Tracing inside the redaction (which copies errors): it sees each call's own outcome, a denial by the gate included.
    const traced = tracing ? tracing.toolEntries({ sessionId: context.sessionId, runId: context.runId, agent: agent.name }) : [];
    return [redactEntry, ...traced, checkToolInput, gate, stopToolCalls];
  }

  /** Primary sessions found so far: a session's place in the tree never changes once it exists. */
  const primaries = new Map<string, string>();
  /** The primary session a session belongs to: asks and "always" rules are per primary session. */
  async function primarySessionOf(sessionId: string): Promise<string> {
    const known = primaries.get(sessionId);
    if (known !== undefined) return known;
    let id = sessionId;
    for (let depth = 0; depth < 64; depth++) {
      const session = await store.getSession(id);
      if (!session) return id;
      if (session.parent_run_id === null) break;
      const run = await store.getRun(session.parent_run_id);
      if (!run) return id;
      id = primaries.get(run.parent_session_id) ?? run.parent_session_id;
      if (primaries.has(run.parent_session_id)) break;
    }
    setBounded(primaries, sessionId, id, 10_000);
    return id;
  }

  const delegation: DelegationServices = {
    store,
    ledger,
    budget,
    agents,
    limits,
    now,
    newId,
    runs: undefined as never,
    modelLabelFor: (name) => {
      return agentModel(agents.get(name)) ?? defaultLabel;
    },
  };

  let sessions: ReturnType<typeof createSessionRunner>;
  /**
   * Primary sessions this process serves: only they auto-resume here. Sessions with nothing
   * going on (no turn, no run here, no notification, no resume pending) are pruned as the set
   * grows, so a long-lived `cadre serve` does not keep every session it ever served; sending to
   * one, or recovering its runs, adds it again.
   */
  const hosted = new Set<string>();
  const hostedPruning = { threshold: 1024, minimum: 1024 };
  const isQuiet = (sessionId: string) =>
    !(sessions.isBusy(sessionId) || resumeTimers.has(sessionId) || runs.localRunsOf(sessionId) > 0 || notifier.pending(sessionId) > 0 || elsewhere.count(sessionId) > 0);
  const host = (sessionId: string) => addPruning(hosted, sessionId, isQuiet, hostedPruning);
  const resumeTimers = new Map<string, NodeJS.Timeout>();
  const appSessions = createAppSessions({ store, now });
  const notifier = createNotifier({
    leavesPending: (sessionId) => appSessions.isApp(sessionId),
    store,
    bus,
    inbox,
    now,
    onError: report,
    onDelivered: (sessionId) => scheduleResume(sessionId),
  });

  function scheduleResume(sessionId: string): void {
      if (!hosted.has(sessionId) || resumeTimers.has(sessionId)) return;
      // An idle primary session wakes up on its own (auto-resume), after a moment to gather
      // notifications that arrive together; a busy one picks them up before its next model call,
      // or right after its turn.
      resumeTimers.set(
        sessionId,
        setTimeout(() => {
          resumeTimers.delete(sessionId);
          sessions.resume(sessionId).catch(report);
        }, 250),
      );
  }

  const summarize = options.summarize?.enabled ? options.summarize : undefined;

  /** Runs this runtime carries out as a worker's jobs, with the host that sent each (see {@link runtimePartsOf}). */
  const jobs = new Map<string, string | undefined>();

  /**
   * The executor that sends runs to the queue's workers, loaded on the first run: `bullmq` stays
   * out of the runtime until a queue is configured and used.
   */
  function queueExecutor(queue: string): RunExecutor & { close(): Promise<void> } {
    let loading: Promise<RunExecutor & { close(): Promise<void> }> | undefined;
    const load = () =>
      (loading ??= import('../executors/bullmq/bullmq-executor.ts').then(
        ({ createBullmqExecutor }) =>
          createBullmqExecutor({
            queue,
            store,
            ledger,
            bus,
            coordination,
            now,
            ownerId,
            workspace: options.workspace ?? process.cwd(),
            stream: shouldStream,
            settings: () => ({ approvals: broker.mode === 'ask' ? 'wait' : broker.mode, ...(options.permissions ? { permissions: options.permissions } : {}) }),
            // Asks of runs on workers wait there for an answer from anywhere: this process's
            // approver (a terminal) is one place to give it.
            onAsk: (approvalId) => {
              store.getApproval(approvalId).then((approval) => approval && broker.relay(approval), report);
            },
            onError: report,
          }),
        (error: unknown) => {
          throw new ConfigError(`The queue needs the 'bullmq' and 'ioredis' packages: npm install bullmq ioredis (${(error as Error).message.split('\n')[0]}).`, { cause: error });
        },
      ));
    return {
      async execute(run, signal) {
        return (await load()).execute(run, signal);
      },
      async close() {
        if (loading) await (await loading.catch(() => undefined))?.close();
      },
    };
  }

  /** The model that summarizes a run's result: the configured one, else the parent's, else the run's own. */
  async function summaryModel(run: RunRecord, runModel: LanguageModel): Promise<LanguageModel> {
    if (summarize?.model !== undefined) return modelFor(summarize.model);
    const parent = await store.getSession(run.parent_session_id);
    const parentAgent = parent && agents.get(parent.agent);
    // A parent that is no agent of cadre's is a host's loop (an MCP client, an app's own loop).
    if (!parent || !parentAgent) return runModel;
    try {
      return modelFor(parentAgent.model ?? parent.model);
    } catch {
      return runModel;
    }
  }

  /** Summarizes a result too long for the parent, when summaries are on. */
  async function summarizeRun(run: RunRecord, text: string, runModel: LanguageModel, signal: AbortSignal, setActivity: RunLive['setActivity']): Promise<RunSummary | null> {
    if (!summarize || text.length <= limits.maxResultChars) return null;
    setActivity({ kind: 'summarizing', characters: text.length });
    const outcome = await summarizeResult(text, { model: await summaryModel(run, runModel), task: run.task, maxChars: summarize.maxChars, timeoutMs: summarize.timeoutMs, signal });
    return outcome.ok ? { summary: outcome.summary, error: null, usage: outcome.usage } : { summary: null, error: outcome.reason, usage: outcome.usage };
  }

  const executor = createInProcessExecutor({
    store,
    ledger,
    bus,
    now,
    ownerId,
    leaseMs: options.leaseMs,
    redactor,
    telemetry: loopTelemetry,
    stream: shouldStream,
    onError: report,
    budget,
    setup: async (run, _signal, live) => {
      const agent = agents.get(run.agent);
      if (!agent) throw new Error(`Agent '${run.agent}' is no longer defined.`);
      const childId = run.child_session_id;
      // The inbox opens before the history is read, so a notification from now on waits for the
      // loop; the history and the sessions are read together (on a database server each is a
      // round trip every run starting waits for).
      inbox.open(childId);
      const history = store.listMessages(childId);
      history.catch(() => {});
      try {
        const [session, sessionId] = await Promise.all([store.getSession(childId), primarySessionOf(run.parent_session_id)]);
        const workspace = toolsFor(agent, await availableTools(agent));
        const tools: ToolSet = { ...workspace };
        if (run.depth < limits.maxDepth) {
          Object.assign(tools, createDelegationTools(delegation, { sessionId: childId, depth: run.depth, parentRunId: run.id }));
        }
        const model = modelFor(agentModel(agent) ?? session?.model);
        return {
          model,
          instructions: withNotices(agent.system, mcpNotices.get(agent) ?? []),
          tools,
          toolMiddleware: toolPipelineFor(agent, workspace, { sessionId, runId: run.id, setActivity: live.setActivity, writePending: live.writePending }),
          takeInjectedMessages: () => takeAndStore(inbox, childId),
          history,
          ...(summarize ? { summarize: (text: string, signal: AbortSignal) => summarizeRun(run, text, model, signal, live.setActivity) } : {}),
          finish: async () => {
            for (const entry of inbox.close(childId)) await entry.onTaken?.();
          },
        };
      } catch (error) {
        // No loop runs: what reached the inbox meanwhile is stored now.
        for (const entry of inbox.close(childId)) await entry.onTaken?.().catch(report);
        throw error;
      }
    },
  });

  const queued = options.queue === undefined ? undefined : queueExecutor(options.queue);
  const runExecutor = queued ?? executor;
  const runs = createRunManager({
    store,
    bus,
    ledger,
    now,
    newId,
    ownerId,
    executor: tracing ? tracing.traceExecutor(runExecutor) : runExecutor,
    coordination,
    limits: { ...limits, leaseMs: options.leaseMs },
    onError: report,
    announcerOf: (runId) => jobs.get(runId),
    onRunFinished: (run) => {
      // A run carried out for a host (a job) is announced by that host, which hosts its parent.
      if (!jobs.has(run.id)) notifier.runFinished(run).catch(report);
    },
  });
  delegation.runs = runs;
  const leaseMs = options.leaseMs ?? 15_000;
  /** Delivers the session's notifications that a dead process owed (see `deliverPendingNotifications`). */
  const deliverOwed = (sessionId?: string) => deliverPendingNotifications({ store, notifier, ownerId, now, sessionId, leaseMs });
  const elsewhere = watchRunsElsewhere({ store, runs, now, leaseMs, deliver: deliverOwed, onError: report });

  sessions = createSessionRunner({
    store,
    bus,
    runs,
    inbox,
    agents,
    limits,
    now,
    newId,
    ownerId,
    leaseMs: options.leaseMs,
    delegation,
    redactor,
    telemetry: loopTelemetry,
    stream: shouldStream,
    traceTurn: tracing?.traceTurn,
    maxConcurrentTurns: options.maxConcurrentTurns,
    coordination,
    onError: report,
    modelFor: (agent, session) => modelFor(agentModel(agent) ?? session.model),
    toolsFor: async (agent) => toolsFor(agent, await availableTools(agent)),
    toolMiddlewareFor: (agent, session, workspace) => toolPipelineFor(agent, workspace, { sessionId: session.id, runId: null }),
    noticesFor: (agent) => mcpNotices.get(agent) ?? [],
    onUnansweredMessages: (sessionId) => scheduleResume(sessionId),
  });


  /**
   * The store takes no more writes: stop every turn and run of this process now. Nothing they do
   * could be stored, and what is stored stays as it was for recovery once the store works again.
   */
  function halt(): void {
    for (const timer of resumeTimers.values()) clearTimeout(timer);
    resumeTimers.clear();
    for (const sessionId of hosted) sessions.stopTurn(sessionId, 'user');
    broker.close();
    runs.close().catch(() => {});
  }

  const cadre: Cadre = {
    store,
    agents,
    limits,
    redactor,
    ownerId,

    async createSession({ agent = 'main', model } = {}) {
      agents.primary(agent);
      const session: SessionRecord = {
        id: newId('ses'),
        agent,
        model: model === undefined ? (agentModel(agents.get(agent)) ?? defaultLabel) : specOf(model),
        created_at: now(),
        status: 'idle',
        parent_run_id: null,
        auto_resumes: 0,
        user_canceled_at: null,
      };
      if (model !== undefined) modelFor(model);
      await store.createSession(session);
      host(session.id);
      return session;
    },

    async send(sessionId, text, { signal } = {}) {
      if (storeFailure.failure) throw storeFailure.failure;
      const session = await store.getSession(sessionId);
      if (!session) throw new ConfigError(`No session '${sessionId}'.`);
      if (session.parent_run_id !== null) throw new ConfigError(`Session '${sessionId}' belongs to run ${session.parent_run_id}; continue it with the agent tool's resume parameter.`);
      if (isAppSession(session)) throw new ConfigError(`Session '${sessionId}' is driven by an app's own loop (cadre.tools); cadre does not run its turns.`);
      host(sessionId);
      return sessions.send(sessionId, text, { signal });
    },

    async waitForIdle(sessionId, { signal } = {}) {
      // A failed store ends the wait: the runs it shows as running will not move in this process.
      const stopped = signal ? AbortSignal.any([signal, storeFailure.signal]) : storeFailure.signal;
      // Before it counts as idle, a hosted session gets what a dead process owed it.
      const beforeIdle = async (id: string) => hosted.has(id) && (await deliverOwed(id)).length > 0;
      await waitForIdle({ sessionId, store, wakeups, signal: stopped, isBusy: (id) => !isQuiet(id), beforeIdle });
      if (storeFailure.failure) throw storeFailure.failure;
    },

    async stopRun(runId, { cause = 'user', reason } = {}) {
      return runs.stop(runId, cause, reason);
    },

    async stopSession(sessionId) {
      sessions.stopTurn(sessionId, 'user');
      const at = now();
      await store.updateSession(sessionId, { user_canceled_at: at });
      // Listed before the signal goes out: the host of the session may end them all at once
      // (over Redis within a millisecond), and they are still the runs this stop ended.
      const active = await store.listRuns({ parent_session_id: sessionId, statuses: ['queued', 'running'] });
      coordination.publish({ type: 'session-stop-requested', session_id: sessionId, at });
      const stopped = await Promise.all(active.map((run) => runs.stop(run.id, 'user', 'The session was stopped.')));
      return stopped.filter((run): run is RunRecord => run !== null && isFinished(run.status));
    },

    sessionTokens(sessionId) {
      return budget.sessionTokens(sessionId);
    },

    approve(approvalId, answer) {
      return broker.answer(approvalId, answer);
    },

    pendingApprovals({ sessionId } = {}) {
      return store.listApprovals({ statuses: ['pending'], session_id: sessionId });
    },

    async recover({ sessionId } = {}) {
      if (sessionId) host(sessionId);
      const recovered = await recoverRuns({ store, ledger, runs, ownerId, now, sessionId, leaseMs, notify: (run) => notifier.runFinished(run) });
      // Runs that go on elsewhere (on workers) for a host that died are announced here when they end.
      for (const run of await store.listRuns({ statuses: ['queued', 'running'], parent_session_id: sessionId })) if (!runs.isLocal(run.id)) elsewhere.watch(run);
      const notified = await deliverOwed(sessionId);
      // Asks of dead processes would wait forever: their runs ask again when they repeat the call.
      await closeOrphanedApprovals({ store, ledger, now });
      return { ...recovered, notified };
    },

    tools(toolOptions) {
      return createAppTools({ delegation, bus, sessions: appSessions }, toolOptions);
    },

    notifications(sessionId) {
      return createAppNotifications({ store, bus, ledger, coordination, now, sessions: appSessions }, sessionId);
    },

    async writeRunParts(writer, partOptions) {
      await appSessions.open(partOptions.sessionId);
      return writeRunParts({ store, bus }, writer, partOptions);
    },

    subscribe(listener) {
      const unsubscribe = bus.subscribe(listener);
      watchers++;
      let subscribed = true;
      return () => {
        if (!subscribed) return;
        subscribed = false;
        watchers--;
        unsubscribe();
      };
    },

    async close() {
      elsewhere.close();
      for (const timer of resumeTimers.values()) clearTimeout(timer);
      resumeTimers.clear();
      for (const sessionId of hosted) sessions.stopTurn(sessionId, 'user');
      broker.close();
      await runs.close();
      await queued?.close();
      gates.close();
      for (const sessionId of hosted) await sessions.idle(sessionId);
      if (!options.coordination) await coordination.close();
      storeFailure.close();
      await tracing?.close().catch(report);
      // A failed store has nothing more to commit; its failure was reported when it happened.
      await store.flush().catch((error: unknown) => {
        if (!isStoreFailure(error)) throw error;
      });
    },
  };
  parts.set(cadre, { runs, ledger, bus, coordination, ownerId, jobs, leaseMs });
  return cadre;
}

/** What a worker built on a runtime needs of it (see `createCadreWorker`); not part of the public API. */
export interface RuntimeParts {
  runs: RunManager;
  ledger: RunLedger;
  bus: RunBus;
  coordination: Coordination;
  ownerId: string;
  /**
   * Runs carried out as jobs for a host, with that host's lease owner id: their host announces
   * their end to their parent, and holds their pending notification.
   */
  jobs: Map<string, string | undefined>;
  leaseMs: number;
}

const parts = new WeakMap<Cadre, RuntimeParts>();

/** The parts of a runtime made by {@link createCadre}. */
export function runtimePartsOf(cadre: Cadre): RuntimeParts {
  const found = parts.get(cadre);
  if (!found) throw new Error('Not a runtime made by createCadre');
  return found;
}

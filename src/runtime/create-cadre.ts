import { hostname } from 'node:os';
import type { LanguageModel, TelemetryOptions, ToolSet } from 'ai';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import { AgentRegistry } from '../agents/agent-registry.ts';
import { createApprovalBroker, type ApprovalMode, type Approver } from '../approvals/approval-broker.ts';
import type { AnsweredApproval, ApprovalAnswer } from '../approvals/answer-approval.ts';
import { gateTools, type ToolGateContext } from '../approvals/gate-tools.ts';
import { closeOrphanedApprovals } from '../approvals/close-orphaned-approvals.ts';
import { compilePermissions, type DecidedRule, type PermissionsConfig } from '../permissions/permissions.ts';
import { builtInAgents } from '../agents/built-in-agents.ts';
import type { Coordination } from '../coordination/coordination.ts';
import { createPollingCoordination } from '../coordination/polling-coordination.ts';
import { resolveLimits, type Limits } from '../config/limits.ts';
import { defaultModelAliases, resolveModelAlias } from '../config/model-aliases.ts';
import { readToolNames } from '../agents/agent-tool-names.ts';
import { createWorkspaceTools } from '../tools/workspace-tools.ts';
import { createDelegationTools } from '../delegation/create-delegation-tools.ts';
import type { DelegationServices } from '../delegation/delegation-services.ts';
import { summarizeResult, type SummarizeSettings } from '../delegation/summarize-result.ts';
import type { RunSummary } from '../executors/in-process-executor.ts';
import { ConfigError } from '../errors/config-error.ts';
import { createInProcessExecutor } from '../executors/in-process-executor.ts';
import { describeModel } from '../models/describe-model.ts';
import { createProviderGates } from '../models/provider-gates.ts';
import { reliableModel } from '../models/reliable-model.ts';
import { createSecretRedactor, type SecretRedactor } from '../models/secret-redactor.ts';
import { resolveModel, type LanguageModelInstance } from '../models/resolve-model.ts';
import { createRunBus, type CadreListener } from '../runs/run-bus.ts';
import { createRunLedger } from '../runs/run-ledger.ts';
import { createRunManager } from '../runs/run-manager.ts';
import type { StopCause } from '../runs/run-stop.ts';
import { createTokenBudget, type SessionTokens } from '../runs/token-budget.ts';
import { createNotifier } from '../sessions/notifier.ts';
import { createSessionInbox, takeAndStore } from '../sessions/session-inbox.ts';
import { createSessionRunner, type TurnResult } from '../sessions/session-runner.ts';
import type { ApprovalRecord, RunRecord, SessionRecord } from '../store/records.ts';
import { isFinished } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { systemNow, timeSortedId, type NewId, type Now } from '../util/clock.ts';
import { addPruning } from '../util/pruned-set.ts';
import { deliverPendingNotifications } from './deliver-pending-notifications.ts';
import { recoverRuns, type RecoveryReport } from './recover-runs.ts';
import { createSessionWakeups, waitForIdle } from './wait-for-idle.ts';

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
   * Workspace tools agents may name in their `tools` allow-list.
   * @default the read tools (`read_file`, `list_files`, `grep`) on the working directory, which the built-in agents use
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
  /** Where internal errors go. @default console.error */
  onError?: (error: unknown) => void;
}

/** The read tools on the working directory: what the built-in agents use when no tools are given. */
function defaultTools(): ToolSet {
  const workspace = createWorkspaceTools({ root: process.cwd() });
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
  /** Resolves when the session is idle and none of its runs is queued or running (auto-resumes included). */
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
  /** Finds runs of dead processes and resumes or abandons them. */
  recover(options?: { sessionId?: string }): Promise<RecoveryReport>;
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
  const { store } = options;
  const now = options.now ?? systemNow;
  const newId = options.newId ?? timeSortedId;
  const limits = resolveLimits(options.maxRetries === undefined ? options.limits : { maxRetries: options.maxRetries, ...options.limits });
  const redactor = createSecretRedactor({ env: options.env, values: options.secrets });
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const report = (error: unknown) => onError(redactor.redactError(error));
  // Every model of this runtime goes through one retry policy, with one 429 gate per provider.
  const gates = createProviderGates();
  const reliable = (model: LanguageModelInstance) =>
    reliableModel(model, { timeoutMs: limits.modelTimeoutMs, maxRetries: limits.maxRetries, retryDelayMs: options.retryDelayMs, redactor, gates });
  let defaultModel: LanguageModel | undefined;
  const agents = options.agents instanceof AgentRegistry ? options.agents : new AgentRegistry([...builtInAgents, ...(options.agents ?? [])]);
  const workspaceTools = options.tools ?? defaultTools();
  const aliases = { ...defaultModelAliases, ...options.modelAliases };
  const specOf = (model: string) => resolveModelAlias(model, aliases);
  const ownerId = `${hostname()}:${process.pid}:${newId('own').slice(-8)}`;
  const bus = createRunBus({ onListenerError: report });
  const coordination = options.coordination ?? createPollingCoordination({ store, onError: report });
  const ledger = createRunLedger({ store, bus, now, coordination });
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

  function toolsFor(agent: AgentDefinition): ToolSet {
    const selected: ToolSet = {};
    for (const name of agent.tools ?? []) {
      const tool = workspaceTools[name];
      // Built-in agents use the read tools when they are there; a runtime given other tools runs them without.
      if (!tool && agent.source === 'built-in') continue;
      if (!tool) throw new ConfigError(`Agent '${agent.name}' lists tool '${name}', which does not exist. Known tools: ${Object.keys(workspaceTools).join(', ') || '(none)'}`);
      selected[name] = tool;
    }
    return selected;
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

  /** The agent's workspace tools, each call behind the permission rules. */
  function gatedToolsFor(agent: AgentDefinition, context: Omit<ToolGateContext, 'agent' | 'agentRules'>): ToolSet {
    return gateTools(toolsFor(agent), { ...context, agent: agent.name, agentRules: rulesOfAgent(agent) }, { store, broker, rules });
  }

  /** The primary session a session belongs to: asks and "always" rules are per primary session. */
  async function primarySessionOf(sessionId: string): Promise<string> {
    let id = sessionId;
    for (let depth = 0; depth < 64; depth++) {
      const session = await store.getSession(id);
      if (!session || session.parent_run_id === null) return id;
      const run = await store.getRun(session.parent_run_id);
      if (!run) return id;
      id = run.parent_session_id;
    }
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
      const model = agents.get(name)?.model;
      return model === undefined ? defaultLabel : specOf(model);
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
  const isQuiet = (sessionId: string) => !(sessions.isBusy(sessionId) || resumeTimers.has(sessionId) || runs.localRunsOf(sessionId) > 0 || notifier.pending(sessionId) > 0);
  const host = (sessionId: string) => addPruning(hosted, sessionId, isQuiet, hostedPruning);
  const resumeTimers = new Map<string, NodeJS.Timeout>();
  const notifier = createNotifier({
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
  async function summarizeRun(run: RunRecord, text: string, runModel: LanguageModel, signal: AbortSignal, setActivity: (text: string) => void): Promise<RunSummary | null> {
    if (!summarize || text.length <= limits.maxResultChars) return null;
    setActivity(`summarizing ${text.length} characters`);
    const outcome = await summarizeResult(text, { model: await summaryModel(run, runModel), task: run.task, maxChars: summarize.maxChars, timeoutMs: summarize.timeoutMs, signal });
    return outcome.ok ? { summary: outcome.summary, error: null, usage: outcome.usage } : { summary: null, error: outcome.reason, usage: outcome.usage };
  }

  const executor = createInProcessExecutor({
    store,
    ledger,
    bus,
    now,
    redactor,
    telemetry: options.telemetry,
    stream: shouldStream,
    onError: report,
    budget,
    setup: async (run, _signal, live) => {
      const agent = agents.get(run.agent);
      if (!agent) throw new Error(`Agent '${run.agent}' is no longer defined.`);
      const session = await store.getSession(run.child_session_id);
      const sessionId = await primarySessionOf(run.parent_session_id);
      const tools: ToolSet = { ...gatedToolsFor(agent, { sessionId, runId: run.id, setActivity: live.setActivity, writePending: live.writePending }) };
      if (run.depth < limits.maxDepth) {
        Object.assign(tools, createDelegationTools(delegation, { sessionId: run.child_session_id, depth: run.depth, parentRunId: run.id }));
      }
      const model = modelFor(agent.model ?? session?.model);
      inbox.open(run.child_session_id);
      return {
        model,
        instructions: agent.system,
        tools,
        takeInjectedMessages: () => takeAndStore(inbox, run.child_session_id),
        ...(summarize ? { summarize: (text: string, signal: AbortSignal) => summarizeRun(run, text, model, signal, live.setActivity) } : {}),
        finish: async () => {
          for (const entry of inbox.close(run.child_session_id)) await entry.onTaken?.();
        },
      };
    },
  });

  const runs = createRunManager({
    store,
    bus,
    ledger,
    now,
    newId,
    ownerId,
    executor,
    coordination,
    limits: { ...limits, leaseMs: options.leaseMs },
    onError: report,
    onRunFinished: (run) => {
      notifier.runFinished(run).catch(report);
    },
  });
  delegation.runs = runs;

  sessions = createSessionRunner({
    store,
    bus,
    runs,
    inbox,
    agents,
    limits,
    now,
    newId,
    delegation,
    redactor,
    telemetry: options.telemetry,
    stream: shouldStream,
    maxConcurrentTurns: options.maxConcurrentTurns,
    coordination,
    onError: report,
    modelFor: (agent, session) => modelFor(agent.model ?? session.model),
    toolsFor: (agent, session) => gatedToolsFor(agent, { sessionId: session.id, runId: null }),
    onUnansweredMessages: (sessionId) => scheduleResume(sessionId),
  });


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
        model: specOf(model ?? agents.get(agent)?.model ?? defaultLabel),
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
      const session = await store.getSession(sessionId);
      if (!session) throw new ConfigError(`No session '${sessionId}'.`);
      if (session.parent_run_id !== null) throw new ConfigError(`Session '${sessionId}' belongs to run ${session.parent_run_id}; continue it with the agent tool's resume parameter.`);
      host(sessionId);
      return sessions.send(sessionId, text, { signal });
    },

    waitForIdle(sessionId, { signal } = {}) {
      return waitForIdle({ sessionId, store, wakeups, signal, isBusy: (id) => !isQuiet(id) });
    },

    async stopRun(runId, { cause = 'user', reason } = {}) {
      return runs.stop(runId, cause, reason);
    },

    async stopSession(sessionId) {
      sessions.stopTurn(sessionId, 'user');
      const at = now();
      await store.updateSession(sessionId, { user_canceled_at: at });
      coordination.publish({ type: 'session-stop-requested', session_id: sessionId, at });
      const active = await store.listRuns({ parent_session_id: sessionId, statuses: ['queued', 'running'] });
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
      const leaseMs = options.leaseMs ?? 15_000;
      const recovered = await recoverRuns({ store, ledger, runs, ownerId, now, sessionId, leaseMs, notify: (run) => notifier.runFinished(run) });
      const notified = await deliverPendingNotifications({ store, notifier, ownerId, now, sessionId, leaseMs });
      // Asks of dead processes would wait forever: their runs ask again when they repeat the call.
      await closeOrphanedApprovals({ store, ledger, now });
      return { ...recovered, notified };
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
      for (const timer of resumeTimers.values()) clearTimeout(timer);
      resumeTimers.clear();
      for (const sessionId of hosted) sessions.stopTurn(sessionId, 'user');
      broker.close();
      await runs.close();
      for (const sessionId of hosted) await sessions.idle(sessionId);
      if (!options.coordination) await coordination.close();
      await store.flush();
    },
  };
  return cadre;
}

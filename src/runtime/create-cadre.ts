import { hostname } from 'node:os';
import type { ToolSet } from 'ai';
import { AgentRegistry } from '../agents/agent-registry.ts';
import { readToolNames } from '../agents/agent-tool-names.ts';
import { builtInAgents } from '../agents/built-in-agents.ts';
import type { AgentToolRequest } from '../agents/tool-selection.ts';
import { createApprovalBroker } from '../approvals/approval-broker.ts';
import { closeOrphanedApprovals } from '../approvals/close-orphaned-approvals.ts';
import { createToolPolicy } from '../approvals/tool-policy.ts';
import { resolveLimits } from '../config/limits.ts';
import { createPollingCoordination } from '../coordination/polling-coordination.ts';
import { shareProviderGates } from '../coordination/share-provider-gates.ts';
import { createDelegationTools } from '../delegation/create-delegation-tools.ts';
import { createDelegationRules, resumeDelegationHold } from '../delegation/delegation-rules.ts';
import type { DelegationScope, DelegationServices } from '../delegation/delegation-services.ts';
import { createRunSummarizer } from '../delegation/summarize-run.ts';
import { createAppNotifications } from '../embed/app-notifications.ts';
import { createAppSessions, isAppSession } from '../embed/app-sessions.ts';
import { createAppTools } from '../embed/app-tools.ts';
import { requireAiSdk7 } from '../embed/require-ai-sdk.ts';
import { writeRunParts } from '../embed/write-run-parts.ts';
import { ConfigError } from '../errors/config-error.ts';
import { createInProcessExecutor } from '../executors/in-process-executor.ts';
import type { LoopContext } from '../executors/loop-context.ts';
import { createQueueExecutor } from '../executors/queue-executor.ts';
import { createRunSetup } from '../executors/run-setup.ts';
import { createHarnessAllowance, createHarnessApprover, createHarnessToolRules } from '../harnesses/harness-approver.ts';
import { createHarnessExecutor } from '../harnesses/harness-executor.ts';
import { routeHarnessRuns } from '../harnesses/route-harness-runs.ts';
import { defaultLogger } from '../logging/default-logger.ts';
import { errorLogger } from '../logging/logger.ts';
import { createAgentTools, mcpSecrets } from '../mcp/client/agent-tools.ts';
import { createModelCatalog } from '../models/model-catalog.ts';
import { createProviderGates } from '../models/provider-gates.ts';
import { createSecretRedactor } from '../models/secret-redactor.ts';
import { createRunBus } from '../runs/run-bus.ts';
import { createRunLedger } from '../runs/run-ledger.ts';
import { createRunManager } from '../runs/run-manager.ts';
import { sendRunMessage } from '../runs/run-inbox.ts';
import { sendToRun } from '../delegation/send-to-run.ts';
import { createTokenBudget } from '../runs/token-budget.ts';
import { createAutoResume } from '../sessions/auto-resume.ts';
import { createNotifier } from '../sessions/notifier.ts';
import { createPrimarySessions } from '../sessions/primary-sessions.ts';
import { createSessionInbox, takeAndStore } from '../sessions/session-inbox.ts';
import { createSessionRunner } from '../sessions/session-runner.ts';
import { createSessionWriter } from '../sessions/session-writer.ts';
import { isFinished, type RunRecord, type RunWorktree } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { storeView } from '../store/store-view.ts';
import { createRuntimeTracing } from '../telemetry/runtime-tracing.ts';
import { resolveTelemetry } from '../telemetry/telemetry-settings.ts';
import { systemNow, systemNowMs, timeSortedId } from '../util/clock.ts';
import { createWorkspaceTools } from '../tools/workspace-tools.ts';
import { createRunWorktrees } from '../worktrees/run-worktrees.ts';
import { withRunWorktrees } from '../worktrees/worktree-executor.ts';
import { changesOfRun, listRunWorktrees, mergeWorktreeOfRun, removeWorktreeOfRun } from '../worktrees/worktree-records.ts';
import type { Cadre, CadreRuntime } from './cadre.ts';
import type { CadreOptions } from './cadre-options.ts';
import { deliverPendingNotifications } from './deliver-pending-notifications.ts';
import { recoverRuns } from './recover-runs.ts';
import { watchRunsElsewhere } from './watch-runs-elsewhere.ts';
import { createSessionWakeups, waitForIdle } from './wait-for-idle.ts';
import { isStoreFailure, watchStoreFailure } from './watch-store-failure.ts';
import { createCadreWorkflows } from './cadre-workflows.ts';
import { workflowToolFor as makeWorkflowTool } from './workflow-tool-for.ts';
import { listFamilyRuns } from '../runs/family-runs.ts';

export type { Cadre, CadreRuntime } from './cadre.ts';
export type { CadreOptions } from './cadre-options.ts';

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
  return createCadreRuntime(options).cadre;
}

/** The read tools on the working directory: what the built-in agents use when no tools are given. */
function defaultTools(store: Store): ToolSet {
  const workspace = createWorkspaceTools({ root: process.cwd(), storeFiles: store.files });
  return Object.fromEntries(readToolNames.filter((name) => workspace[name] !== undefined).map((name) => [name, workspace[name]]));
}

/** {@link createCadre}, with the parts a worker builds on. It only wires: each policy lives in its part. */
export function createCadreRuntime(options: CadreOptions): CadreRuntime {
  requireAiSdk7('cadre');
  const { store } = options;
  const now = options.now ?? systemNow;
  const nowMs = options.nowMs ?? systemNowMs;
  const newId = options.newId ?? timeSortedId;
  const leaseMs = options.leaseMs ?? 15_000;
  const limits = resolveLimits(options.maxRetries === undefined ? options.limits : { maxRetries: options.maxRetries, ...options.limits });
  const redactor = createSecretRedactor({ env: options.env, values: [...(options.secrets ?? []), ...mcpSecrets(options.mcpServers)] });
  const onError = options.onError ?? errorLogger(options.logger ?? defaultLogger());
  // Once the store fails (a full disk, a deleted database), its failure is reported once, and
  // what follows from it (every run's and turn's write rejecting) is not reported again.
  const storeFailure = watchStoreFailure(store, (failure) => {
    onError(redactor.redactError(failure));
    stopWork().catch(() => {});
  });
  const report = (error: unknown) => {
    if (storeFailure.failure && isStoreFailure(error)) return;
    onError(redactor.redactError(error));
  };
  const ownerId = `${hostname()}:${process.pid}:${newId('own').slice(-8)}`;
  const bus = createRunBus({ onListenerError: report });
  const coordination = options.coordination ?? createPollingCoordination({ store, onError: report });
  // Every model goes through one retry policy, with one 429 gate per provider shared with the other processes.
  const gates = shareProviderGates(createProviderGates({ nowMs }), coordination, nowMs);
  const models = createModelCatalog({
    model: options.model,
    aliases: options.modelAliases,
    baseURL: options.baseURL,
    env: options.env,
    reliability: { timeoutMs: limits.modelTimeoutMs, maxRetries: limits.maxRetries, retryDelayMs: options.retryDelayMs, redactor, gates },
  });
  const telemetrySettings = resolveTelemetry(options.tracing, options.env);
  const tracing = telemetrySettings
    ? createRuntimeTracing({ settings: telemetrySettings, store, redact: (text) => redactor.redact(text), telemetry: options.telemetry, onError: report })
    : undefined;
  const ledger = createRunLedger({ store, bus, now, coordination, traceContext: tracing?.capture });
  const inbox = createSessionInbox();
  const wakeups = createSessionWakeups(bus);
  let watchers = 0;
  const streaming = options.streaming ?? 'auto';
  const loops: LoopContext = {
    store,
    bus,
    now,
    nowMs,
    ownerId,
    leaseMs: options.leaseMs,
    redactor,
    onError: report,
    telemetry: tracing?.loopTelemetry ?? options.telemetry,
    stream: () => streaming === 'always' || (streaming === 'auto' && watchers > 0),
  };
  const agents = options.agents instanceof AgentRegistry ? options.agents : new AgentRegistry([...builtInAgents, ...(options.agents ?? [])]);
  const onMcpServerFailure = options.onMcpServerFailure ?? ((failure) => (options.logger ?? defaultLogger()).warn({ server: failure.server }, failure.message));
  const tools = createAgentTools({
    workspaceTools: options.tools ?? defaultTools(store),
    mcpServers: options.mcpServers,
    env: options.env,
    onError: report,
    onServerFailure: (failure) => onMcpServerFailure(redactor.redactError(failure) as typeof failure),
  });
  const budget = createTokenBudget({ store, limits });
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
  const policy = createToolPolicy({ store, broker, redactor, permissions: options.permissions, traceEntries: tracing?.toolEntries });
  const primarySessionOf = createPrimarySessions(store);
  const modelOf = (agent: { model?: string } | undefined, fallback: string | undefined) => models.modelFor(models.agentModel(agent) ?? fallback);

  const setup = createRunSetup({
    store,
    agent: (name) => agents.get(name),
    models,
    tools,
    policy,
    primarySessionOf,
    onError: report,
    inbox: { open: inbox.open, close: inbox.close, take: (sessionId) => takeAndStore(inbox, sessionId) },
    // A fork of its parent's own agent keeps the parent's tools at any depth: past the limit they refuse to delegate.
    delegationTools: (run, { forksParent }) => {
      if (run.depth >= limits.maxDepth && !forksParent) return undefined;
      const scope = { sessionId: run.child_session_id, depth: run.depth, parentRunId: run.id, agent: run.agent };
      return { ...createDelegationTools(delegation, scope), ...workflowToolFor(agents.get(run.agent), scope) };
    },
    summarize: createRunSummarizer({
      settings: options.summarize,
      maxResultChars: limits.maxResultChars,
      store,
      agent: (name) => agents.get(name),
      modelFor: models.modelFor,
    }),
  });
  const queued =
    options.queue === undefined
      ? undefined
      : createQueueExecutor({
          queue: options.queue,
          store,
          ledger,
          bus,
          coordination,
          now,
          nowMs,
          ownerId,
          onError: report,
          workspace: options.workspace ?? process.cwd(),
          stream: loops.stream,
          settings: () => ({ approvals: broker.mode === 'ask' ? 'wait' : broker.mode, ...(options.permissions ? { permissions: options.permissions } : {}) }),
          // Asks of runs on workers wait there for an answer from anywhere: this process's approver (a terminal) is one place to give it.
          onAsk: (approvalId) => void store.getApproval(approvalId).then((approval) => approval && broker.relay(approval), report),
        });
  const worktrees = createRunWorktrees({ workspace: options.workspace ?? process.cwd(), baseRef: options.worktree?.baseRef });
  const worktreeRecords = { store, now };
  // Runs of `harness:` agents are carried out by their program, in the workspace or the run's own worktree (docs/harnesses.md).
  const workspaceOf = () => options.workspace ?? process.cwd();
  const harnesses = createHarnessExecutor({
    ...loops,
    ledger,
    budget,
    agent: (name) => agents.get(name),
    commands: options.harnesses,
    env: options.env ?? process.env,
    workspaceOf,
    modelTimeoutMs: limits.modelTimeoutMs,
    approve: createHarnessApprover({ store, broker, permissions: options.permissions, primarySessionOf, workspaceOf }),
    allowance: createHarnessAllowance({ store, broker, permissions: options.permissions, primarySessionOf, workspaceOf }),
    toolRules: createHarnessToolRules({ store, broker, permissions: options.permissions, primarySessionOf, workspaceOf }),
  });
  // Runs with a worktree of their own work there, and their changes are committed when they end.
  const executor = withRunWorktrees(
    queued ??
      routeHarnessRuns(
        createInProcessExecutor({ ...loops, ledger, budget, setup, maxOutputRepairs: limits.maxOutputRepairs }),
        harnesses,
        (run) => agents.get(run.agent)?.harness !== undefined,
      ),
    { worktrees, store, onError: report },
  );
  const jobs = new Map<string, string | undefined>();
  const runs = createRunManager({
    store,
    bus,
    ledger,
    now,
    nowMs,
    newId,
    ownerId,
    coordination,
    onError: report,
    executor: tracing ? tracing.traceExecutor(executor) : executor,
    limits: { ...limits, leaseMs: options.leaseMs },
    announcerOf: (runId) => jobs.get(runId),
    // A run recovered while its delegation awaited a person's answer waits for it again.
    resumeHold: (run) => resumeDelegationHold(delegation, run),
    // A run carried out for a host (a job) is announced by that host, which hosts its parent.
    onRunFinished: (run) => {
      if (!jobs.has(run.id)) notifier.runFinished(run).catch(report);
      // A run stopped before it started changed nothing: its worktree goes.
      if (run.worktree && run.started_at === null) void finishUnstarted(run, run.worktree).catch(report);
    },
  });
  /** Delivers the session's notifications that a dead process owed (see `deliverPendingNotifications`). */
  const deliverOwed = (sessionId?: string) => deliverPendingNotifications({ store, notifier, ownerId, now, sessionId, leaseMs });
  const elsewhere = watchRunsElsewhere({ store, runs, now, leaseMs, deliver: deliverOwed, onError: report });
  const delegation: DelegationServices = {
    store,
    ledger,
    budget,
    agents,
    limits,
    now,
    newId,
    runs,
    modelLabelFor: (name) => models.agentModel(agents.get(name)) ?? models.defaultLabel,
    sendRunMessage: (input) => sendRunMessage({ store, bus, now, newId, coordination }, input),
    delegationRules: createDelegationRules({ permissions: options.permissions, agents, broker, primarySessionOf }),
    worktrees,
  };
  async function finishUnstarted(run: RunRecord, worktree: RunWorktree): Promise<void> {
    await store.updateRun(run.id, { worktree: await worktrees.finish({ id: run.id, description: run.description, worktree }) });
  }
  const writer = createSessionWriter({ store, bus });
  const sessions = createSessionRunner({
    ...loops,
    runs,
    inbox,
    agents,
    limits,
    newId,
    delegation,
    coordination,
    writer,
    traceTurn: tracing?.traceTurn,
    maxConcurrentTurns: options.maxConcurrentTurns,
    modelFor: (agent, session) => modelOf(agent, session.model),
    toolsFor: async (agent) => tools.select(agent, await tools.available(agent)),
    optInToolsFor: (agent, sessionId) => workflowToolFor(agent, { sessionId, depth: 0, parentRunId: null }),
    toolMiddlewareFor: (agent, session, workspace) => policy.pipelineFor(agent, workspace, { sessionId: session.id, runId: null }),
    noticesFor: (agent) => tools.notices(agent),
    onUnansweredMessages: (sessionId) => resumes.schedule(sessionId),
  });
  const appSessions = createAppSessions({ store, now });
  const notifier = createNotifier({
    store,
    bus,
    inbox,
    now,
    onError: report,
    leavesPending: (sessionId) => appSessions.isApp(sessionId),
    onDelivered: (sessionId) => resumes.schedule(sessionId),
  });
  const resumes = createAutoResume({
    delayMs: options.autoResumeDelayMs,
    resume: (sessionId) => sessions.resume(sessionId),
    isBusy: (sessionId) => sessions.isBusy(sessionId) || runs.localRunsOf(sessionId) > 0 || notifier.pending(sessionId) > 0 || elsewhere.count(sessionId) > 0,
    onError: report,
  });

  const workflows = createCadreWorkflows({
    store,
    runs,
    delegation,
    now,
    nowMs,
    newId,
    ownerId,
    leaseMs,
    maxActive: limits.maxActivePerParent,
    traceWorkflow: tracing?.traceWorkflow,
    createSession: async () => (await cadre.createSession()).id,
    recover: async (sessionId) => {
      await cadre.recover({ sessionId });
    },
    onError: report,
  });
  /** The `workflow` tool, for an agent that lists it (runs of the caller at `scope`). */
  function workflowToolFor(agent: AgentToolRequest | undefined, scope: DelegationScope): ToolSet {
    return makeWorkflowTool(agent, scope, { engine: workflows.engine, limits });
  }

  /** Stops every turn and run of this process (they stay as stored, for recovery); resolves once the runs let go. */
  function stopWork(): Promise<void> {
    workflows.engine.close();
    resumes.cancel();
    for (const sessionId of resumes.hosted()) sessions.stopTurn(sessionId, 'user');
    broker.close();
    return runs.close();
  }

  const cadre: Cadre = {
    store: storeView(store),
    agents,
    limits,
    redactor,
    ownerId,

    async createSession({ agent = 'main', model } = {}) {
      agents.primary(agent);
      if (model !== undefined) models.modelFor(model);
      const label = model === undefined ? (models.agentModel(agents.get(agent)) ?? models.defaultLabel) : models.specOf(model);
      const session = await writer.create({ id: newId('ses'), agent, model: label, created_at: now() });
      resumes.host(session.id);
      return session;
    },

    async send(sessionId, text, { signal } = {}) {
      if (storeFailure.failure) throw storeFailure.failure;
      const session = await store.getSession(sessionId);
      if (!session) throw new ConfigError(`No session '${sessionId}'.`);
      if (session.parent_run_id !== null)
        throw new ConfigError(`Session '${sessionId}' belongs to run ${session.parent_run_id}; continue it with the agent tool's resume parameter.`);
      if (isAppSession(session)) throw new ConfigError(`Session '${sessionId}' is driven by an app's own loop (cadre.tools); cadre does not run its turns.`);
      resumes.host(sessionId);
      return sessions.send(sessionId, text, { signal });
    },

    async waitForIdle(sessionId, { signal } = {}) {
      // A failed store ends the wait: the runs it shows as running will not move in this process.
      const stopped = signal ? AbortSignal.any([signal, storeFailure.signal]) : storeFailure.signal;
      // Before it counts as idle, a hosted session gets what a dead process owed it.
      const beforeIdle = async (id: string) => resumes.isHosted(id) && (await deliverOwed(id)).length > 0;
      await waitForIdle({ sessionId, store, wakeups, signal: stopped, isBusy: (id) => !resumes.isQuiet(id), beforeIdle });
      if (storeFailure.failure) throw storeFailure.failure;
    },

    stopRun: (runId, { cause = 'user', reason } = {}) => runs.stop(runId, cause, reason),

    sendToRun: (runId, message, { interrupt } = {}) => sendToRun(delegation, null, { runId, message, from: 'person', interrupt, mode: 'background' }),

    async stopSession(sessionId) {
      sessions.stopTurn(sessionId, 'user');
      const at = now();
      await writer.markStopped(sessionId, at);
      // Listed before the signal goes out: the host of the session may end them all at once
      // (over Redis within a millisecond), and they are still the runs this stop ended.
      const active = await store.listRuns({ parent_session_id: sessionId, statuses: ['queued', 'running'] });
      coordination.publish({ type: 'session-stop-requested', session_id: sessionId, at });
      const stopped = await Promise.all(active.map((run) => runs.stop(run.id, 'user', 'The session was stopped.')));
      return stopped.filter((run): run is RunRecord => run !== null && isFinished(run.status));
    },

    sessionTokens: (sessionId) => budget.sessionTokens(sessionId),
    approve: (approvalId, answer) => broker.answer(approvalId, answer),
    pendingApprovals: ({ sessionId } = {}) => store.listApprovals({ statuses: ['pending'], session_id: sessionId }),

    async recover({ sessionId } = {}) {
      if (sessionId) resumes.host(sessionId);
      const recovered = await recoverRuns({ store, ledger, runs, ownerId, now, sessionId, leaseMs, notify: (run) => notifier.runFinished(run) });
      // Runs that go on elsewhere (on workers) for a host that died are announced here when they end.
      for (const run of await store.listRuns({ statuses: ['queued', 'running'], parent_session_id: sessionId }))
        if (!runs.isLocal(run.id)) elsewhere.watch(run);
      const notified = await deliverOwed(sessionId);
      // Asks of dead processes would wait forever: their runs ask again when they repeat the call.
      await closeOrphanedApprovals({ store, ledger, now });
      // Workflows of registered names whose process died go on here (one session's recovery is a replay's own step).
      if (!sessionId) await workflows.api.resumeWorkflows();
      return { ...recovered, notified };
    },

    worktrees: () => listRunWorktrees(store),
    worktreeChanges: (runId) => changesOfRun(store, runId),
    mergeWorktree: (runId, mergeOptions) => mergeWorktreeOfRun(worktreeRecords, runId, mergeOptions),
    removeWorktree: (runId, removeOptions) => removeWorktreeOfRun(worktreeRecords, runId, removeOptions),
    ...workflows.api,

    tools: (toolOptions) => createAppTools({ delegation, bus, sessions: appSessions }, toolOptions),
    notifications: (sessionId) => createAppNotifications({ store, bus, ledger, coordination, now, sessions: appSessions }, sessionId),

    async writeRunParts(partWriter, partOptions) {
      await appSessions.open(partOptions.sessionId);
      return writeRunParts({ store, bus }, partWriter, partOptions);
    },

    subscribe(listener, interest) {
      const unsubscribe = bus.subscribe(listener, interest);
      // Runs the session started before: their child sessions join its family (later ones join as they start).
      if (interest)
        listFamilyRuns(store, interest.sessionId).then((runs) => {
          for (const run of runs) bus.follow(listener, run.child_session_id);
        }, report);
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
      await stopWork();
      await queued?.close();
      gates.close();
      for (const sessionId of resumes.hosted()) await sessions.idle(sessionId);
      if (!options.coordination) await coordination.close();
      storeFailure.close();
      await tracing?.close().catch(report);
      // A failed store has nothing more to commit; its failure was reported when it happened.
      await store.flush().catch((error: unknown) => {
        if (!isStoreFailure(error)) throw error;
      });
    },
  };
  return { cadre, bus, runs, ledger, coordination, ownerId, now, nowMs, leaseMs, jobs, workflows: workflows.engine };
}

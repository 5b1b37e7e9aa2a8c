import type { LanguageModel, ToolSet } from 'ai';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { Coordination } from '../coordination/coordination.ts';
import { createPollingCoordination } from '../coordination/polling-coordination.ts';
import type { Limits } from '../config/limits.ts';
import { createDelegationTools } from '../delegation/create-delegation-tools.ts';
import type { DelegationServices } from '../delegation/delegation-services.ts';
import { answerOrphanedCalls, callerGoneWarning } from '../executors/answer-orphaned-calls.ts';
import { toModelMessages } from '../executors/message-codec.ts';
import { createStepRecorder } from '../executors/step-recorder.ts';
import { withNotices } from '../executors/run-setup.ts';
import { createToolCallJournal } from '../executors/tool-call-journal.ts';
import { runAgentLoop } from '../loop/agent-loop.ts';
import type { ToolMiddleware } from '../loop/tool-pipeline.ts';
import type { RunManager } from '../runs/run-manager.ts';
import { RunStopSignal, type StopCause } from '../runs/run-stop.ts';
import { shortMessage } from '../runs/run-executor.ts';
import { usageOf } from '../store/add-usage.ts';
import type { MessageRecord, RunRecord, SessionRecord } from '../store/records.ts';
import { setBounded } from '../util/bounded-map.ts';
import type { NewId } from '../util/clock.ts';
import type { LoopContext } from '../executors/loop-context.ts';
import { takeAndStore, type SessionInbox } from './session-inbox.ts';
import { createSessionWriter, type SessionWriter } from './session-writer.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';
import { NotFoundError } from '../errors/not-found-error.ts';

/** How a parent turn ended. */
export interface TurnResult {
  session_id: string;
  status: 'completed' | 'failed' | 'canceled';
  text: string;
  error?: string;
}

/** Options of {@link createSessionRunner}: the runtime's {@link LoopContext}, and what turns need besides. */
export interface SessionRunnerOptions extends LoopContext {
  runs: RunManager;
  inbox: SessionInbox;
  agents: AgentRegistry;
  limits: Limits;
  newId: NewId;
  delegation: DelegationServices;
  modelFor: (agent: AgentDefinition, session: SessionRecord) => LanguageModel;
  /** The agent's workspace tools for one session (MCP servers' tools among them, started if need be). */
  toolsFor: (agent: AgentDefinition, session: SessionRecord) => ToolSet | Promise<ToolSet>;
  /** What the agent should know besides its prompt (MCP servers that could not start). @default nothing */
  noticesFor?: (agent: AgentDefinition) => string[];
  /**
   * The tool pipeline's entries for a turn's tools, its workspace and delegation tools together
   * (input check, permission rules, redaction, stop), given the workspace tools `toolsFor` gave. @default none
   */
  toolMiddlewareFor?: (agent: AgentDefinition, session: SessionRecord, workspace: ToolSet) => readonly ToolMiddleware[];
  /**
   * Turns of all sessions running at once; more wait their turn. Bounds memory when thousands of
   * sessions wake together. @default 64
   */
  maxConcurrentTurns?: number;
  /** Called when a turn ended with notifications it did not answer. */
  onUnansweredMessages?: (sessionId: string) => void;
  /** How often a running turn looks for a stop requested by another process, with the default (polling) coordination. @default 500 */
  stopPollMs?: number;
  /** Where a person's stop of a session from another process is heard. @default polling the store */
  coordination?: Coordination;
  /** The writer of the sessions' records. @default one on `store` and `bus` */
  writer?: SessionWriter;
  /** Runs each turn inside a span (telemetry); `resumed` tells an auto-resumed turn. @default untraced */
  traceTurn?: (sessionId: string, resumed: boolean, work: () => Promise<TurnResult>) => Promise<TurnResult>;
}

/** Runs primary agents' turns: one at a time per session, every step stored as it ends. */
export interface SessionRunner {
  /** Adds a user message and runs a turn (after the current one, if any). */
  send(sessionId: string, text: string, options?: { signal?: AbortSignal }): Promise<TurnResult>;
  /** Runs a turn on what the session holds (auto-resume after notifications). */
  resume(sessionId: string): Promise<TurnResult | null>;
  /** Stops the session's current turn; its foreground runs stop with it. */
  stopTurn(sessionId: string, cause: StopCause): boolean;
  isBusy(sessionId: string): boolean;
  /** Resolves when the session has no turn running or waiting. */
  idle(sessionId: string): Promise<void>;
}

/** Creates the {@link SessionRunner}. */
export function createSessionRunner(options: SessionRunnerOptions): SessionRunner {
  const { store, bus, inbox, agents, limits, now } = options;
  const report = options.onError ?? reportToDefaultLogger;
  const chains = new Map<string, Promise<unknown>>();
  const controllers = new Map<string, AbortController>();
  const slots = createSlots(options.maxConcurrentTurns ?? 64);
  const coordination =
    options.coordination ?? createPollingCoordination({ store, pollMs: { 'session-stop-requested': options.stopPollMs ?? 500 }, onError: report });
  /**
   * The last message seq a turn of each session read: a resume looks only past it. Bounded, so
   * a long-lived process does not keep one per session it ever ran; a forgotten session's resume
   * looks at all its messages, with the same answer.
   */
  const seen = new Map<string, number>();
  const markSeen = (sessionId: string, seq: number) => setBounded(seen, sessionId, seq, seenSessions);

  async function listMessages(sessionId: string) {
    let messages = await store.listMessages(sessionId);
    // Calls a dead process left without results (it crashed mid-step) are answered first.
    // Foreground runs such a call still waits for go on promoted: they notify when they end.
    const promote = (run: RunRecord) => options.delegation.ledger.promote(run.id, callerGoneWarning);
    if (await answerOrphanedCalls({ store, sessionId, now, leaseMs: options.leaseMs, messages, promote })) messages = await store.listMessages(sessionId);
    markSeen(sessionId, messages.at(-1)?.seq ?? 0);
    return messages;
  }

  function publishMessages(sessionId: string, messages: readonly MessageRecord[]) {
    const last = messages.reduce((seq, message) => Math.max(seq, message.seq), 0);
    if (last > 0) markSeen(sessionId, Math.max(last, seen.get(sessionId) ?? 0));
    for (const message of messages) bus.publish({ type: 'message', message });
  }

  const writer = options.writer ?? createSessionWriter({ store, bus });
  const setStatus = writer.setStatus;

  /** Closes the session's inbox; what is left in it is stored, and wakes the session. */
  async function handBack(sessionId: string): Promise<void> {
    const left = inbox.close(sessionId);
    for (const entry of left) await entry.onTaken?.().catch(report);
    if (left.length > 0) options.onUnansweredMessages?.(sessionId);
  }

  /**
   * A turn of the session. `written` is a write of the session made just before it (auto-resume
   * reset or count): the turn reads the session while it is written, one round trip on a database
   * server, and fails if it fails.
   */
  async function turn(sessionId: string, signal: AbortSignal, resumed = false, written?: Promise<void>): Promise<TurnResult> {
    const startedAt = now();
    written?.catch(() => {});
    await slots.acquire();
    try {
      const work = () => runTurn(sessionId, signal, startedAt, written);
      return await (options.traceTurn ? options.traceTurn(sessionId, resumed, work) : work());
    } finally {
      slots.release();
    }
  }

  async function runTurn(sessionId: string, signal: AbortSignal, startedAt: string, written?: Promise<void>): Promise<TurnResult> {
    // Read after the write (the store's reads see this process's earlier writes), in one go with it.
    const [session] = await Promise.all([store.getSession(sessionId), written]);
    if (!session) throw new NotFoundError('session', sessionId);
    const agent = agents.primary(session.agent);
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    if (signal.aborted) onAbort();
    // Stopped by a person while it waited for a slot.
    if (session.user_canceled_at !== null && session.user_canceled_at >= startedAt) controller.abort(new RunStopSignal('user'));
    signal.addEventListener('abort', onAbort, { once: true });
    controllers.set(sessionId, controller);
    // A person may stop this session from another process (`cadre stop SESSION_ID`): it marks
    // the session in the store and signals it, and the turn notices here.
    const unwatch = coordination.subscribe('session-stop-requested', sessionId, (signal) => {
      if (signal.at >= startedAt) controller.abort(new RunStopSignal('user'));
    });
    const running = setStatus(sessionId, 'running');
    inbox.open(sessionId);
    // The history is read while the status is written (one round trip on a database server),
    // after the inbox opened: a notification from now on waits for this turn's loop.
    const history = listMessages(sessionId);
    history.catch(() => {});
    try {
      await running;
    } catch (error) {
      // No turn runs: what reached the inbox meanwhile is stored as if the session were idle.
      await handBack(sessionId);
      unwatch();
      signal.removeEventListener('abort', onAbort);
      if (controllers.get(sessionId) === controller) controllers.delete(sessionId);
      throw error;
    }
    const journal = createToolCallJournal({ store, sessionId, ownerId: options.ownerId, now });
    const steps = createStepRecorder({ store, sessionId, journal, now, publish: (messages) => publishMessages(sessionId, messages) });
    try {
      const workspace = await options.toolsFor(agent, session);
      const tools: ToolSet = {
        ...workspace,
        ...createDelegationTools(options.delegation, { sessionId, depth: 0, parentRunId: null, agent: agent.name }),
      };
      const result = await runAgentLoop({
        model: options.modelFor(agent, session),
        instructions: withNotices(agent.system, options.noticesFor?.(agent) ?? []),
        messages: toModelMessages(await history),
        tools,
        toolMiddleware: options.toolMiddlewareFor?.(agent, session, workspace),
        maxTurns: agent.maxTurns ?? limits.defaultMaxTurns,
        abortSignal: controller.signal,
        redactor: options.redactor,
        telemetry: options.telemetry,
        stream: options.stream?.() ?? true,
        takeInjectedMessages: () => takeAndStore(inbox, sessionId),
        toolCalls: journal,
        onTextDelta: (text) => bus.publish({ type: 'text-delta', session_id: sessionId, text }),
        // The primary agent's own tokens count against the session's budget (limits.maxTokensPerSession)
        // once the model has answered, before the tools it called (delegations) run.
        onModelUsage: (usage) => {
          store.addSessionUsage(sessionId, usageOf(usage)).catch(report);
        },
        onStepFinish: async (step) => {
          await steps.endStep(step.messages);
          await steps.flush();
        },
      });
      // A step that never ended (stopped, failed) still answers every call it stored.
      await steps.finish();
      if (result.aborted) {
        const cause = RunStopSignal.causeOf(controller.signal);
        await setStatus(sessionId, 'canceled', cause === 'user' ? { user_canceled_at: now() } : {});
        return { session_id: sessionId, status: 'canceled', text: result.lastText };
      }
      if (result.error !== undefined) {
        await setStatus(sessionId, 'failed');
        return { session_id: sessionId, status: 'failed', text: result.lastText, error: shortMessage(result.error) };
      }
      await setStatus(sessionId, 'idle');
      return { session_id: sessionId, status: 'completed', text: result.text };
    } catch (error) {
      await setStatus(sessionId, 'failed').catch(report);
      return { session_id: sessionId, status: 'failed', text: '', error: shortMessage(error) };
    } finally {
      // Notifications that came after the last model call are stored now and wake the session.
      await handBack(sessionId);
      unwatch();
      signal.removeEventListener('abort', onAbort);
      if (controllers.get(sessionId) === controller) controllers.delete(sessionId);
    }
  }

  /** Turns of one session run one after another. */
  function enqueue<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const previous = chains.get(sessionId) ?? Promise.resolve();
    const next = previous.then(work, work);
    chains.set(sessionId, next);
    next
      .finally(() => {
        if (chains.get(sessionId) === next) chains.delete(sessionId);
      })
      .catch(() => {});
    return next;
  }

  return {
    send(sessionId, text, { signal = new AbortController().signal } = {}) {
      return enqueue(sessionId, async () => {
        const [stored] = await store.appendMessages([{ session_id: sessionId, role: 'user', content: text, created_at: now() }]);
        bus.publish({ type: 'message', message: stored });
        // A person spoke: auto-resume is allowed again.
        return turn(sessionId, signal, false, writer.allowAutoResume(sessionId));
      });
    },

    resume(sessionId) {
      return enqueue(sessionId, async () => {
        const session = await store.getSession(sessionId);
        if (!session || session.user_canceled_at !== null || session.auto_resumes >= limits.maxAutoResumes) return null;
        // Only a message nobody answered yet (a notification that came after the last model call) needs a turn.
        const newer = await store.listMessages(sessionId, { afterSeq: seen.get(sessionId) ?? 0 });
        if (newer.length === 0 || newer.at(-1)?.role !== 'user') return null;
        return turn(sessionId, new AbortController().signal, true, writer.countAutoResume(session));
      });
    },

    stopTurn(sessionId, cause) {
      const controller = controllers.get(sessionId);
      if (!controller) return false;
      controller.abort(new RunStopSignal(cause));
      return true;
    },

    isBusy(sessionId) {
      return chains.has(sessionId);
    },

    async idle(sessionId) {
      while (chains.has(sessionId)) await chains.get(sessionId)!.catch(() => {});
    },
  };
}

/** Sessions whose last read message seq is kept. */
const seenSessions = 10_000;

/** A counting semaphore: at most `size` holders, the others wait in order. */
function createSlots(size: number) {
  let used = 0;
  const waiting: Array<() => void> = [];
  return {
    async acquire(): Promise<void> {
      if (used < size) {
        used++;
        return;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    release(): void {
      const next = waiting.shift();
      if (next) next();
      else used--;
    },
  };
}

export { withNotices } from '../executors/run-setup.ts';

import type { Coordination } from '../coordination/coordination.ts';
import { createPollingCoordination } from '../coordination/polling-coordination.ts';
import type { RunErrorKind, RunMode, RunRecord, RunStatus, RunWorktree } from '../store/records.ts';
import { hasPendingMessages, isFinished } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { systemNowMs, type NewId, type Now, type NowMs } from '../util/clock.ts';
import { onAbort } from '../util/on-abort.ts';
import { ownerIsGone } from '../util/owner-liveness.ts';
import { activityEventData, finalActivity, renderActivity, type RunActivity } from './activity.ts';
import { createLeaseKeeper } from './lease-keeper.ts';
import type { RunBus } from './run-bus.ts';
import type { RunLedger } from './run-ledger.ts';
import { failedOutcome, type ExecutionOutcome, type RunExecutor, type RunMessageFeed } from './run-executor.ts';
import { deliverRunMessages } from './run-inbox.ts';
import { decideRunEnd } from './run-outcome.ts';
import { RunDetachSignal, RunInterruptSignal, RunStopSignal, stoppedStatus, type StopCause } from './run-stop.ts';
import { createScheduler, type Scheduler } from './scheduler.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';
import { NotFoundError } from '../errors/not-found-error.ts';

/** The limits the run manager enforces. */
export interface RunManagerLimits {
  maxActivePerParent: number;
  maxQueuedPerParent: number;
  maxActiveGlobal: number;
  maxResultChars: number;
  runTimeoutMs?: number;
  /** How long a lease lasts without renewal. @default 15000 */
  leaseMs?: number;
  /** How often to look for stops requested by other processes, with the default (polling) coordination. @default 500 */
  stopPollMs?: number;
}

/** What a new run needs. The child session and first message are made by the caller. */
export interface NewRunInput {
  /** A run id made beforehand (the child session records it); default: a new one. */
  id?: string;
  parent_session_id: string;
  child_session_id: string;
  parent_run_id: string | null;
  tool_call_id: string | null;
  agent: string;
  description: string;
  task: string;
  context: string | null;
  mode: RunMode;
  depth: number;
  max_turns: number;
  resumed_from: string | null;
  /** The workflow call that made the run, stored with it in one commit (section 22). */
  workflow?: { id: string; key: string } | null;
  input_hash?: string | null;
  /** The JSON Schema the run's result must match (docs/structured-output.md). @default null (free text) */
  output_schema?: Record<string, unknown> | null;
  /** The parent run or session whose conversation the child session copied (`fork`). @default null */
  forked_from?: string | null;
  /** The run's own git worktree, made before it starts (`isolation: worktree`). @default null */
  worktree?: RunWorktree | null;
  /** Warnings the run starts with (`worktree_fresh`: the worktree of the run it follows was gone). @default none */
  warnings?: RunRecord['warnings'];
}

/**
 * What keeps a new run `queued`, holding no place in the slot queue, until it settles: an ask on a
 * delegation (CONTRACT section 19). Once it lets the run go, the run joins the queue at its end.
 */
export interface RunHold {
  /** The run's activity while held (`awaiting approval: agent reviewer`). */
  activity: RunActivity;
  /** Settles with whether the run may go; `signal` aborts when the run is stopped meanwhile. */
  wait(run: RunRecord, signal: AbortSignal): Promise<HoldOutcome>;
}

/** How a {@link RunHold} ended: the run goes, or it ends `failed` with the error. */
export type HoldOutcome = { go: true } | { go: false; error: { kind: RunErrorKind; message: string } };

/** Options of {@link createRunManager}. */
export interface RunManagerOptions {
  store: Store;
  bus: RunBus;
  ledger: RunLedger;
  now: Now;
  /** The clock in epoch milliseconds (waits for runs of other processes). @default systemNowMs */
  nowMs?: NowMs;
  newId: NewId;
  limits: RunManagerLimits;
  /** This process's identity in leases. */
  ownerId: string;
  executor: RunExecutor;
  /**
   * Signals between processes: stops requested of this process's runs, ends of runs it waits for
   * elsewhere. @default polling the store
   */
  coordination?: Coordination;
  /** Called once when a run reaches a finished state (in this process). */
  onRunFinished?: (run: RunRecord) => void;
  /**
   * The process that announces the end of run `runId` to its parent, when not this one (a run
   * this process carries out as a worker's job is announced by the host that sent it): a pending
   * notification is held in its name, so that recovery knows whose death leaves it owed.
   * @default this process
   */
  announcerOf?: (runId: string) => string | undefined;
  /**
   * The hold of a run recovered while it was held (a queued run whose activity awaits approval of
   * a delegation): it is held again, never started, until its hold lets it go. @default none: it is queued
   */
  resumeHold?: (run: RunRecord) => RunHold | undefined;
  onError?: (error: unknown) => void;
}

/**
 * Owns the lifecycle of runs in this process: creating, scheduling, executing, waiting on,
 * stopping (with cascade to the runs a run started), leases, and stops requested by other
 * processes. Every state change goes through the {@link RunLedger}.
 */
export interface RunManager {
  /**
   * Creates a run, takes a slot or queues it; a run refused by the queue cap ends `failed` at once.
   * With a `hold`, the run waits `queued` outside the queue until the hold lets it go.
   */
  start(input: NewRunInput, options?: { hold?: RunHold }): Promise<RunRecord>;
  /** Resolves with the run when it finishes, or with its current record on timeout or abort. */
  wait(runId: string, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<RunRecord>;
  /** Stops a queued or running run and the runs it started; finished runs are returned as they are. */
  stop(runId: string, cause: StopCause, reason?: string): Promise<RunRecord | null>;
  /** Number of runs this process is executing or holding in its queues. */
  activeCount(): number;
  /** Whether this process is executing or queueing the run. */
  isLocal(runId: string): boolean;
  /** Runs of this parent session that this process has not settled yet (notifications included). */
  localRunsOf(parentSessionId: string): number;
  /**
   * Adopts a run recovered from a dead process (or taken from the queue by a worker): queues it
   * again for execution. `fresh` says `run` is as the store holds it now (the caller just wrote
   * it, as a worker's claim does): a running run then starts from it without reading it again.
   */
  adopt(run: RunRecord, options?: { fresh?: boolean }): void;
  close(): Promise<void>;
}

interface Execution {
  controller: AbortController;
  /** Settles when the run's execution is over here (its end written, or it was let go). */
  done: Promise<void>;
  /** Set when this process shuts down: the run is left running for another process to resume. */
  detached?: boolean;
  stopCause?: StopCause;
  stopReason?: string;
  timedOut?: boolean;
  /** Whether messages may wait for the run's loop (see {@link RunMessageFeed}). */
  messagesWaiting: boolean;
  /** Messages this execution has heard of, so a signal repeated by polling interrupts once. */
  heardMessages: Set<string>;
  /** The current pass of the run's loop: aborted by the run's own signal, or alone for a message with `interrupt`. */
  interrupt: AbortController;
}

const queued: RunActivity = { kind: 'queued' };
const waitingForSlot: RunActivity = { kind: 'waiting_for_slot' };

/** Creates the {@link RunManager}. */
export function createRunManager(options: RunManagerOptions): RunManager {
  const { store, ledger, now, limits, ownerId, executor } = options;
  const nowMs = options.nowMs ?? systemNowMs;
  const report = options.onError ?? reportToDefaultLogger;
  const coordination = options.coordination ?? createPollingCoordination({ store, pollMs: { 'stop-requested': limits.stopPollMs ?? 500 }, onError: report });
  // Stop requests of other processes are listened for while this process holds runs.
  let stopRequests: (() => void) | null = null;
  // Messages for runs this process executes, sent from any process, likewise.
  let messageSignals: (() => void) | null = null;
  const scheduler: Scheduler = createScheduler(limits);
  const executions = new Map<string, Execution>();
  const local = new Set<string>();
  const localParents = new Map<string, number>();
  const trackLocal = (run: RunRecord) => {
    if (local.has(run.id)) return;
    local.add(run.id);
    stopRequests ??= coordination.subscribe('stop-requested', ownerId, (signal) => {
      if (local.has(signal.run_id)) manager.stop(signal.run_id, signal.cause, signal.reason ?? undefined).catch(report);
    });
    messageSignals ??= coordination.subscribe('run-message', ownerId, (signal) => {
      const execution = executions.get(signal.run_id);
      if (!execution || execution.heardMessages.has(signal.message_id)) return;
      execution.heardMessages.add(signal.message_id);
      execution.messagesWaiting = true;
      if (signal.interrupt) execution.interrupt.abort(new RunInterruptSignal());
    });
    localParents.set(run.parent_session_id, (localParents.get(run.parent_session_id) ?? 0) + 1);
  };
  const untrackLocal = (run: Pick<RunRecord, 'id' | 'parent_session_id'>) => {
    if (!local.delete(run.id)) return;
    if (local.size === 0) {
      stopRequests?.();
      stopRequests = null;
      messageSignals?.();
      messageSignals = null;
    }
    const count = (localParents.get(run.parent_session_id) ?? 1) - 1;
    if (count > 0) localParents.set(run.parent_session_id, count);
    else localParents.delete(run.parent_session_id);
  };
  /** Adopted runs that are running already, with the record to start from when it is fresh (else null). */
  const adopted = new Map<string, RunRecord | null>();
  /** Runs waiting for their hold to let them go, with what aborts the hold when they stop. */
  const held = new Map<string, AbortController>();
  const waiters = new Map<string, Array<(run: RunRecord) => void>>();
  let closed = false;

  const leases = createLeaseKeeper({ store, now, ownerId, leaseMs: limits.leaseMs, holding: () => local.size > 0, onError: report });
  const leaseUntil = leases.until;

  function settle(run: RunRecord): void {
    const list = waiters.get(run.id);
    waiters.delete(run.id);
    for (const resolve of list ?? []) resolve(run);
    // The notification is under way before the run stops counting as this process's.
    options.onRunFinished?.(run);
    untrackLocal(run);
  }

  async function admit(run: RunRecord, approved = false): Promise<void> {
    trackLocal(run);
    const entry = {
      runId: run.id,
      parentSessionId: run.parent_session_id,
      start: () => {
        execute(run.id).catch(report);
      },
      pastQueueCap: approved,
    };
    // A running run was given its slot by the process that scheduled it (a worker's job comes from
    // its host, whose caps decided): waiting here again for this process's own caps would hold a
    // taken job idle.
    if (adopted.has(run.id)) return scheduler.occupy(entry);
    const admission = scheduler.admit(entry);
    if (admission === 'full') {
      await finish(run.id, 'failed', {
        error: {
          kind: 'too_many_active',
          message: `More than ${limits.maxQueuedPerParent} runs are waiting in this session; wait for some to finish or stop them.`,
        },
      });
    } else if (admission === 'queued') {
      void ledger.update(run.id, { activity: waitingForSlot }, { type: 'activity', data: activityEventData(waitingForSlot) }).catch(report);
    }
  }

  /** Keeps a run out of the queue until its hold settles; then queues it, or ends it `failed`. */
  function hold(run: RunRecord, runHold: RunHold): void {
    trackLocal(run);
    const controller = new AbortController();
    held.set(run.id, controller);
    const current = () => held.get(run.id) === controller && !closed;
    runHold
      .wait(run, controller.signal)
      .catch((error: unknown): HoldOutcome => ({ go: false, error: { kind: 'execution_error', message: (error as Error).message } }))
      .then(async (outcome) => {
        // Stopped meanwhile (the stop ended it), or this process shuts down (it stays held for recovery).
        if (!current()) return;
        held.delete(run.id);
        if (!outcome.go) {
          await finish(run.id, 'failed', { error: outcome.error });
          return;
        }
        const latest = await store.getRun(run.id);
        // Let go by a person: the queue cap, which bounds what a model piles up, does not refuse it now.
        if (latest?.status === 'queued') await admit(latest, true);
        else if (latest && isFinished(latest.status)) settle(latest);
      })
      .catch(report);
  }

  async function finish(runId: string, status: RunStatus, patch: Partial<RunRecord> = {}, check?: (current: RunRecord) => boolean): Promise<RunRecord | null> {
    // Every caller passes the result, the error or the partial result, which the line shows.
    const merged = { result: null, error: null, partial_result: null, ...patch, status };
    const run = await ledger.transition(runId, status, { ...patch, activity: finalActivity(merged) }, {}, options.announcerOf?.(runId) ?? ownerId, check);
    if (run) settle(run);
    return run;
  }

  function execute(runId: string): Promise<void> {
    let ended!: () => void;
    const execution: Execution = {
      controller: new AbortController(),
      done: new Promise<void>((resolve) => (ended = resolve)),
      messagesWaiting: false,
      heardMessages: new Set(),
      interrupt: new AbortController(),
    };
    executions.set(runId, execution);
    return carryOut(runId, execution).finally(ended);
  }

  async function carryOut(runId: string, execution: Execution): Promise<void> {
    let timeout: NodeJS.Timeout | undefined;
    try {
      // A run adopted from a dead process (or a worker's job) is already running: its loop goes
      // on from its transcript. Only a queued run moves to running (the move is not tried for an
      // adopted one, which it could not change).
      const adoptedRun = adopted.get(runId);
      let run: RunRecord | null = null;
      if (adoptedRun === undefined) {
        run = await ledger.transition(runId, 'running', {
          lease_owner: ownerId,
          lease_expires_at: leaseUntil(),
          activity: { kind: 'waiting_for_model' },
        });
      } else {
        adopted.delete(runId);
        run = adoptedRun ?? (await store.getRun(runId));
      }
      if (run?.status !== 'running') return;
      if (execution.stopCause) execution.controller.abort(new RunStopSignal(execution.stopCause));
      if (limits.runTimeoutMs !== undefined) {
        timeout = setTimeout(() => {
          execution.timedOut = true;
          execution.controller.abort(new Error('timeout'));
        }, limits.runTimeoutMs);
      }
      const feed: RunMessageFeed = {
        waiting: () => execution.messagesWaiting,
        take: async () => {
          execution.messagesWaiting = false;
          return deliverRunMessages({ store, bus: options.bus, now }, runId);
        },
      };
      // Passes of the run's loop: one, unless a message interrupted it or arrived as it would end.
      for (;;) {
        // Messages that wait as a pass starts go to its first model call, without interrupting it.
        for (const message of run.messages ?? []) {
          if (message.delivered_at !== null) continue;
          execution.heardMessages.add(message.id);
          execution.messagesWaiting = true;
        }
        // The pass's own signal: aborted by the run's (a stop, a timeout, a shutdown) or by an
        // interrupt. A plain controller the run's signal forwards to, not AbortSignal.any: every
        // model and tool call listens to it, and a composite signal costs each of them more.
        const pass = new AbortController();
        execution.interrupt = pass;
        const forward = () => pass.abort(execution.controller.signal.reason);
        if (execution.controller.signal.aborted) forward();
        else execution.controller.signal.addEventListener('abort', forward, { once: true });
        const outcome = await executor
          .execute(run, pass.signal, { messages: feed })
          .catch((error: unknown): ExecutionOutcome => failedOutcome(error))
          .finally(() => execution.controller.signal.removeEventListener('abort', forward));
        if (execution.detached) {
          // Hand the run over at once: its lease ends now, so the next process recovers it (unless
          // a worker executes it and holds the lease).
          if ((await store.getRun(runId))?.lease_owner === ownerId) await ledger.update(runId, { lease_expires_at: now() });
          untrackLocal(run);
          return;
        }
        if (execution.interrupt.signal.aborted && !execution.controller.signal.aborted) {
          const current = await store.getRun(runId);
          if (current?.status === 'running') {
            run = current;
            continue;
          }
        }
        const end = decideRunEnd(outcome, {
          stopCause: execution.stopCause,
          timedOut: execution.timedOut,
          runTimeoutMs: limits.runTimeoutMs,
          maxTurns: run.max_turns,
          maxResultChars: limits.maxResultChars,
        });
        // A run that would end by itself while a message waits takes the message and goes on.
        const goesOn = end.status === 'completed' || end.status === 'completed_empty';
        const ended = await finish(runId, end.status, end.patch, goesOn ? (current) => !hasPendingMessages(current) : undefined);
        if (!ended && goesOn) {
          const current = await store.getRun(runId);
          if (current?.status === 'running' && hasPendingMessages(current)) {
            run = current;
            continue;
          }
        }
        return;
      }
    } finally {
      clearTimeout(timeout);
      executions.delete(runId);
      scheduler.release(runId);
      // A run that ended some other way (stopped while starting) still wakes its waiters.
      if (local.has(runId)) {
        const run = await store.getRun(runId);
        if (run && isFinished(run.status)) settle(run);
      }
    }
  }

  async function cascade(run: RunRecord): Promise<void> {
    const children = await store.listRuns({ parent_session_id: run.child_session_id, statuses: ['queued', 'running'] });
    await Promise.all(children.map((child) => manager.stop(child.id, 'parent', `Its parent run ${run.id} was stopped.`)));
  }

  const manager: RunManager = {
    async start(input, startOptions) {
      const at = now();
      const { id, ...fields } = input;
      const run: RunRecord = {
        id: id ?? options.newId('run'),
        ...fields,
        forked_from: fields.forked_from ?? null,
        status: 'queued',
        turns: 0,
        created_at: at,
        started_at: null,
        ended_at: null,
        promoted_at: null,
        consumed_at: null,
        last_activity: renderActivity(startOptions?.hold?.activity ?? queued),
        activity: startOptions?.hold?.activity ?? queued,
        result: null,
        partial_result: null,
        error: null,
        usage: { input_tokens: 0, output_tokens: 0 },
        warnings: fields.warnings ?? [],
        notification: null,
        lease_owner: ownerId,
        lease_expires_at: leaseUntil(),
        stop_requested_at: null,
        stop_requested_by: null,
        stop_reason: null,
        worktree: fields.worktree ?? null,
        workflow: fields.workflow ?? null,
        input_hash: fields.input_hash ?? null,
        harness: null,
      };
      if (closed) throw new Error('The run manager is closed');
      await ledger.insert(run);
      if (startOptions?.hold) hold(run, startOptions.hold);
      else await admit(run);
      return (await store.getRun(run.id)) ?? run;
    },

    async wait(runId, { signal, timeoutMs } = {}) {
      // A run this process has not settled yet is waited for at once: settling it resolves the
      // waiters before it stops counting as local, so its end cannot be missed.
      if (!local.has(runId) || signal?.aborted) {
        const current = await store.getRun(runId);
        if (!current) throw new NotFoundError('run', runId);
        if (isFinished(current.status) || signal?.aborted) return current;
        if (!local.has(runId)) return waitRemote(runId, { signal, timeoutMs });
      }
      return new Promise<RunRecord>((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        let forget: (() => void) | undefined;
        const done = (run: RunRecord) => {
          clearTimeout(timer);
          forget?.();
          resolve(run);
        };
        const giveUp = () => {
          remove();
          store.getRun(runId).then((run) => (run ? done(run) : reject(new Error(`No run ${runId}`))), reject);
        };
        const remove = () => {
          const list = waiters.get(runId);
          if (list)
            waiters.set(
              runId,
              list.filter((entry) => entry !== done),
            );
        };
        const list = waiters.get(runId);
        if (list) list.push(done);
        else waiters.set(runId, [done]);
        if (signal) forget = onAbort(signal, giveUp);
        if (timeoutMs !== undefined) timer = setTimeout(giveUp, timeoutMs);
      });
    },

    async stop(runId, cause, reason) {
      const run = await store.getRun(runId);
      if (!run || isFinished(run.status)) return run;
      const status = stoppedStatus(cause);
      const holding = held.get(runId);
      if (holding) {
        held.delete(runId);
        holding.abort(new RunStopSignal(cause, reason));
        const stopped = await finish(runId, status, { error: null });
        if (stopped) await cascade(stopped);
        return stopped ?? store.getRun(runId);
      }
      if (scheduler.isQueued(runId)) {
        scheduler.release(runId);
        const stopped = await finish(runId, status, { error: null });
        if (stopped) await cascade(stopped);
        return stopped ?? store.getRun(runId);
      }
      const execution = executions.get(runId);
      if (execution) {
        execution.stopCause ??= cause;
        execution.stopReason ??= reason;
        execution.controller.abort(new RunStopSignal(cause, reason));
        const stopped = await manager.wait(runId);
        await cascade(stopped);
        return stopped;
      }
      if (local.has(runId)) return run;
      return stopRemote(run, cause, reason);
    },

    activeCount() {
      return local.size;
    },

    isLocal(runId) {
      return local.has(runId);
    },

    localRunsOf(parentSessionId) {
      return localParents.get(parentSessionId) ?? 0;
    },

    adopt(run, { fresh = false } = {}) {
      const resumed = run.status === 'queued' ? options.resumeHold?.(run) : undefined;
      if (resumed) return hold(run, resumed);
      if (run.status === 'running') adopted.set(run.id, fresh ? run : null);
      admit(run).catch(report);
    },

    async close() {
      closed = true;
      leases.close();
      stopRequests?.();
      stopRequests = null;
      messageSignals?.();
      messageSignals = null;
      if (!options.coordination) await coordination.close();
      const running = [...executions.entries()];
      for (const [, execution] of running) {
        execution.detached = true;
        execution.controller.abort(new RunDetachSignal());
      }
      // Wait for the loops to let go, so nothing writes after the store closes.
      await Promise.all(running.map(([, execution]) => execution.done));
    },
  };

  /** Another process owns the run: ask it to stop, or take over if its lease is gone. */
  async function stopRemote(run: RunRecord, cause: StopCause, reason?: string): Promise<RunRecord | null> {
    const status = stoppedStatus(cause);
    const leaseAlive = run.lease_expires_at !== null && run.lease_expires_at > now() && run.lease_owner !== null && !ownerIsGone(run.lease_owner);
    if (!leaseAlive) {
      const stopped = await ledger.transition(run.id, status, { activity: { kind: 'finished', status } });
      if (stopped) await cascade(stopped);
      return stopped ?? store.getRun(run.id);
    }
    await ledger.update(run.id, { stop_requested_at: now(), stop_requested_by: cause, stop_reason: reason ?? null });
    coordination.publish({ type: 'stop-requested', run_id: run.id, owner: run.lease_owner!, cause, reason: reason ?? null });
    return waitRemote(run.id, { timeoutMs: 2_500 });
  }

  /** Waits for a run another process executes to end (its `run-ended` signal), or for the timeout or abort. */
  async function waitRemote(runId: string, { signal, timeoutMs }: { signal?: AbortSignal; timeoutMs?: number }): Promise<RunRecord> {
    const deadline = timeoutMs === undefined ? Infinity : nowMs() + timeoutMs;
    for (;;) {
      const run = await store.getRun(runId);
      if (!run) throw new NotFoundError('run', runId);
      if (isFinished(run.status) || signal?.aborted || nowMs() >= deadline) return run;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          off();
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const off = coordination.subscribe('run-ended', runId, done);
        // Read again now and then: a signal may be lost on its way (a dropped connection).
        const timer = setTimeout(done, Math.min(1_000, Math.max(1, deadline - nowMs())));
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  return manager;
}

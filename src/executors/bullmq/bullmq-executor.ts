import { Queue, QueueEvents, type Job } from 'bullmq';
import type { Coordination } from '../../coordination/coordination.ts';
import { reportToDefaultLogger } from '../../logging/default-logger.ts';
import type { RunBus } from '../../runs/run-bus.ts';
import type { RunLedger } from '../../runs/run-ledger.ts';
import type { ExecutionOutcome, RunExecutor } from '../../runs/run-executor.ts';
import { RunDetachSignal, RunStopSignal } from '../../runs/run-stop.ts';
import { isFinished, type RunRecord } from '../../store/records.ts';
import type { Store } from '../../store/store.ts';
import { systemNowMs, type Now, type NowMs } from '../../util/clock.ts';
import { ownerIsGone } from '../../util/owner-liveness.ts';
import { connectionOf, parseQueueUrl, runQueueName, type QueueSettings, type RunJobData, type RunJobResult } from './run-job.ts';
import { quietErrors } from './quiet-errors.ts';
import { isStalledFailure } from './stalled-failure.ts';

/** Options of {@link createBullmqExecutor}. */
export interface BullmqExecutorOptions {
  /** The queue: a `redis://` URL (with an optional `?prefix=`), or its parsed settings. */
  queue: string | QueueSettings;
  store: Store;
  ledger: RunLedger;
  /** Where the workers' live events of these runs are published again, for this process's views. */
  bus: RunBus;
  /** Carries stops to workers, and their runs' ends and live events back. */
  coordination: Coordination;
  now: Now;
  /** The clock in epoch milliseconds (how often workers are told this process is watched). @default systemNowMs */
  nowMs?: NowMs;
  /** This process's identity in leases: a run whose lease it still holds has not reached a worker. */
  ownerId: string;
  /** The absolute path of the workspace these runs' tools work in. */
  workspace: string;
  /** The settings each job carries (asks, permission rules), read when the run is sent. */
  settings: () => Pick<RunJobData, 'approvals' | 'permissions'>;
  /** Told of each ask for approval a worker raises in these runs (its `approval-request` event). @default nothing */
  onAsk?: (approvalId: string) => void;
  /** How often the store is read while a run executes elsewhere, in case a signal was lost. @default 2000 */
  checkMs?: number;
  /**
   * Whether someone watches this process's live views (the runtime's `stream()`): only then do
   * workers relay the runs' streamed text and messages here, and runs they start then stream.
   * Run events come either way. @default always
   */
  stream?: () => boolean;
  onError?: (error: unknown) => void;
}

/** A {@link RunExecutor} that sends runs to `cadre worker` processes; close it with the runtime. */
export interface BullmqExecutor extends RunExecutor {
  close(): Promise<void>;
}

/**
 * The host's side of the queue: a run whose turn has come (the host's scheduler decided, with its
 * caps and FIFO order) becomes a BullMQ job named by the run id, which one `cadre worker` carries
 * out against the shared store. The run's end reaches the host through the coordination signal
 * `run-ended` and BullMQ's QueueEvents; its live events come back through coordination and are
 * published on this process's bus, so views here see the same events as for a local run. While
 * `stream()` says someone watches, this process tells the workers so (`views-watched`, every 2 s
 * while runs are out), and they relay the runs' streamed text and messages (`run-output`), which
 * are published here as the `text-delta` and `message` events a local run publishes.
 *
 * A stop (a person's or the parent's) takes back a job no worker has started, and otherwise asks
 * the worker that holds the run's lease to stop it. A job BullMQ gave up on because its workers
 * kept dying (stalled-job recovery exhausted) ends the run `abandoned`; a job every worker refused
 * (none has the workspace) ends it `failed` saying so.
 */
export function createBullmqExecutor(options: BullmqExecutorOptions): BullmqExecutor {
  const { store, ledger, bus, coordination, now } = options;
  const nowMs = options.nowMs ?? systemNowMs;
  const report = quietErrors(options.onError ?? reportToDefaultLogger, undefined, nowMs);
  const settings = typeof options.queue === 'string' ? parseQueueUrl(options.queue) : options.queue;
  const checkMs = options.checkMs ?? 2_000;
  const stream = options.stream ?? (() => true);
  let closed = false;
  let connections: { queue: Queue<RunJobData, RunJobResult>; events: QueueEvents } | undefined;
  const open = () => {
    if (connections) return connections;
    const queue = new Queue<RunJobData, RunJobResult>(runQueueName, { connection: connectionOf(settings), prefix: settings.prefix });
    const events = new QueueEvents(runQueueName, { connection: connectionOf(settings), prefix: settings.prefix });
    // Connection errors come back on their own (ioredis reconnects); they are reported, never thrown.
    queue.on('error', report);
    events.on('error', report);
    return (connections = { queue, events });
  };

  /** Runs out on workers now; while there are some, this process says whether it is watched. */
  let out = 0;
  let watchTimer: NodeJS.Timeout | undefined;
  /** When workers were last told this process is watched; 0 once told it is not (or never told). */
  let announcedAt = 0;
  let offOutput: (() => void) | undefined;
  function announceWatch(): void {
    const watched = stream();
    if (watched && nowMs() - announcedAt >= watchRepeatMs) {
      announcedAt = nowMs();
      coordination.publish({ type: 'views-watched', host: options.ownerId, for_ms: watchRepeatMs * 3 });
    } else if (!watched && announcedAt !== 0) {
      announcedAt = 0;
      coordination.publish({ type: 'views-watched', host: options.ownerId, for_ms: 0 });
    }
  }
  function sendingOut(): () => void {
    // The workers' output for this process comes on a channel of its own, listened to from the first run on.
    offOutput ??= coordination.subscribe('run-output', options.ownerId, ({ events }) => {
      for (const event of events) bus.publish(event);
    });
    if (out++ === 0) {
      watchTimer = setInterval(announceWatch, watchCheckMs);
      watchTimer.unref();
    }
    announceWatch();
    let back = false;
    return () => {
      if (back) return;
      back = true;
      if (--out === 0) clearInterval(watchTimer);
    };
  }

  /**
   * Publishes on this process's bus the live events of the run and of the runs it starts on its
   * worker. `catchUp` makes sure views here saw the run's end once it ended elsewhere: its end may
   * be heard first another way (the store, polled), and live events that come after the
   * execution returned would find nobody following.
   */
  function follow(run: RunRecord): { stop(): void; catchUp(current: RunRecord): Promise<void> } {
    const followed = new Set([run.id]);
    const listening = new Map<string, () => void>();
    /** The last stored event of the run views here saw, and whether it was its end. */
    let lastSeq = 0;
    let endSeen = false;
    let onEnd = () => {};
    const ended = new Promise<void>((resolve) => (onEnd = resolve));
    const listen = (sessionId: string) => {
      if (listening.has(sessionId)) return;
      listening.set(
        sessionId,
        coordination.subscribe('live-event', sessionId, ({ run: current, event }) => {
          if (!followed.has(current.id)) {
            if (current.parent_run_id === null || !followed.has(current.parent_run_id)) return;
            followed.add(current.id);
            listen(current.child_session_id);
          }
          if (current.id === run.id && 'seq' in event) {
            lastSeq = Math.max(lastSeq, event.seq);
            if (event.type === 'run-end') {
              endSeen = true;
              onEnd();
            }
          }
          bus.publish({ type: 'run-event', run: current, event });
          if (event.type === 'approval-request' && typeof event.data.approval_id === 'string') options.onAsk?.(event.data.approval_id);
        }),
      );
    };
    listen(run.parent_session_id);
    listen(run.child_session_id);
    return {
      stop() {
        for (const off of listening.values()) off();
      },
      async catchUp(current) {
        if (endSeen || !isFinished(current.status)) return;
        // Its live end is usually a few milliseconds away; what never comes is read from the store.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, 500)))]);
        clearTimeout(timer);
        if (endSeen) return;
        for (const event of await store.listRunEvents(run.id, { afterSeq: lastSeq })) bus.publish({ type: 'run-event', run: current, event });
      },
    };
  }

  /** Whether another process (a worker) holds the run's lease and may still be alive. */
  function heldElsewhere(run: RunRecord): boolean {
    return (
      run.lease_owner !== null &&
      run.lease_owner !== options.ownerId &&
      run.lease_expires_at !== null &&
      run.lease_expires_at > now() &&
      !ownerIsGone(run.lease_owner)
    );
  }

  async function requestStop(run: RunRecord, queue: Queue<RunJobData, RunJobResult>, reason: unknown): Promise<'taken-back' | 'asked'> {
    // A job no worker has started is taken back whole (BullMQ refuses to remove a locked one).
    if ((await queue.remove(run.id).catch(() => 0)) === 1) return 'taken-back';
    const current = await store.getRun(run.id);
    if (!current || isFinished(current.status)) return 'asked';
    const cause =
      reason instanceof RunStopSignal || (reason as { name?: string } | null)?.name === 'RunStopSignal'
        ? RunStopSignal.causeOf({ reason } as AbortSignal)
        : 'parent';
    const text = reason instanceof Error ? reason.message : null;
    await ledger.update(run.id, { stop_requested_at: now(), stop_requested_by: cause, stop_reason: text });
    if (current.lease_owner !== null) coordination.publish({ type: 'stop-requested', run_id: run.id, owner: current.lease_owner, cause, reason: text });
    return 'asked';
  }

  return {
    async execute(run, signal): Promise<ExecutionOutcome> {
      if (closed) throw new Error('The run queue executor is closed.');
      const { queue, events } = open();
      const following = follow(run);
      const back = sendingOut();
      let offEnded = () => {};
      let timer: NodeJS.Timeout | undefined;
      try {
        const ended = new Promise<void>((resolve) => {
          offEnded = coordination.subscribe('run-ended', run.id, () => resolve());
        });
        const data: RunJobData = {
          run_id: run.id,
          workspace: options.workspace,
          ...options.settings(),
          refused_by: [],
          host: options.ownerId,
          watched: stream(),
        };
        // The run id names the job: a run sent again (recovered by another host) joins its job.
        const send = () => queue.add('run', data, { jobId: run.id, attempts: 5, removeOnComplete: true, removeOnFail: { age: 7 * 24 * 3600 } });
        const job: Job<RunJobData, RunJobResult> = await send();
        type Settled = { how: 'ended' } | { how: 'job-done' } | { how: 'job-failed'; reason: string } | { how: 'taken-back' } | { how: 'let-go' };
        let isSettled = false;
        const settled = await new Promise<Settled>((settle) => {
          const resolve = (how: Settled) => {
            isSettled = true;
            settle(how);
          };
          void ended.then(() => resolve({ how: 'ended' }));
          job.waitUntilFinished(events).then(
            () => resolve({ how: 'job-done' }),
            (error: unknown) => resolve({ how: 'job-failed', reason: error instanceof Error ? error.message : String(error) }),
          );
          // Signals can be lost (a Redis restart): the store and the job say where the run stands.
          const check = async () => {
            const state = await queue.getJobState(run.id);
            // A job still waiting for a worker: its run has not begun, nothing to read in the store
            // (a host has a thousand of them out at once; each read would cost a row).
            if (waitingStates.has(state)) return;
            const current = await store.getRun(run.id);
            if (current && isFinished(current.status)) return resolve({ how: 'ended' });
            // Redis lost the job (restarted without persistence, flushed): send the run again,
            // unless a worker still holds its lease (it carries the run out to its end).
            if (state === 'unknown' && current && !heldElsewhere(current)) await send();
            if (state === 'failed') {
              const failed = await queue.getJob(run.id);
              resolve({ how: 'job-failed', reason: failed?.failedReason ?? 'The job failed.' });
            }
          };
          const tick = () => {
            // A look still under way when the run settled (or the executor closed) schedules no other.
            if (isSettled || closed) return;
            timer = setTimeout(() => {
              // A Redis that is away is reported by the connections; this looks again later.
              check()
                .catch(() => {})
                .finally(tick);
            }, checkMs);
          };
          tick();
          const onAbort = () => {
            const reason: unknown = signal.reason;
            if (RunDetachSignal.isInstance(reason)) return resolve({ how: 'let-go' });
            requestStop(run, queue, reason).then((result) => {
              // A timeout (or any abort that is not a stop) ends the run here at once; the worker
              // stops when it hears.
              if (result === 'taken-back') resolve({ how: 'taken-back' });
              else if (!(reason instanceof RunStopSignal)) resolve({ how: 'let-go' });
            }, report);
          };
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        });
        // The worker's live run-end travels just ahead of its `run-ended`; let it arrive.
        if (settled.how === 'job-done') await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 500))]);
        const current = (await store.getRun(run.id)) ?? run;
        if (isFinished(current.status)) {
          await following.catchUp(current);
          return outcomeOf(current);
        }
        if (settled.how === 'job-failed') {
          if (isStalledFailure(settled.reason)) return { ...outcomeOf(current), abandoned: 'its worker died and no other worker could resume it' };
          return { ...outcomeOf(current), error: { kind: 'execution_error', message: settled.reason } };
        }
        return outcomeOf(current);
      } finally {
        clearTimeout(timer);
        offEnded();
        following.stop();
        back();
      }
    },

    async close() {
      closed = true;
      clearInterval(watchTimer);
      offOutput?.();
      offOutput = undefined;
      const opened = connections;
      connections = undefined;
      if (!opened) return;
      // BullMQ's close can hang after Redis was away for a while (a blocking read that never
      // returns); nothing more is sent or read, so a connection still open after a moment is dropped.
      await Promise.all([opened.events, opened.queue].map((connection) => closeWithin(connection, 1_000)));
    },
  };
}

/** The states of a job no worker has taken yet (or that went back to wait for one). */
const waitingStates: ReadonlySet<string> = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

/** How often a process with runs out looks whether it is watched, and how often it repeats that it is. */
const watchCheckMs = 500;
const watchRepeatMs = 2_000;

/** What the host's run manager needs of a run that executed elsewhere: it ended there already, or ends here now. */
function outcomeOf(run: RunRecord): ExecutionOutcome {
  const text = run.result?.text ?? '';
  return { text, lastText: run.partial_result ?? text, finishReason: 'stop', steps: run.turns };
}

/** Closes a BullMQ queue or queue-events object, or disconnects it when closing takes longer than `ms`. */
async function closeWithin(connection: { close(): Promise<void>; disconnect(): Promise<void> }, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    connection.close().then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  if (!closed) void connection.disconnect().catch(() => {});
}

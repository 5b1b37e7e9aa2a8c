import { isFinished } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Coordination, SignalType } from './coordination.ts';
import { createSignalListeners } from './signal-listeners.ts';
import { watchExternalVersion } from '../store/watch-external-version.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';

/** Options of {@link createPollingCoordination}. */
export interface PollingCoordinationOptions {
  store: Store;
  /**
   * How often the store is read for each kind of signal while someone listens to it.
   * @default stop-requested, run-message and session-stop-requested 500, approval-answered 250, run-ended 100, notification-pending 500
   */
  pollMs?: Partial<Record<PolledSignalType, number>>;
  /**
   * How often the store's external version (see `Store.externalVersion`) is read while someone
   * listens: once another process committed, every kind listened to is read at once, so its
   * signals arrive within about this long instead of within their `pollMs`. Unused for a store
   * without it.
   * @default 20
   */
  watchMs?: number;
  onError?: (error: unknown) => void;
}

/** The signals found in the store; live events, run output, watches and 429 pauses are only heard as they happen. */
export type PolledSignalType = Exclude<SignalType, LiveSignalType>;

/** The signals that exist only as they happen: nothing in the store to poll for. */
type LiveSignalType = 'live-event' | 'rate-limited' | 'views-watched' | 'run-output';
const liveSignalTypes: ReadonlySet<SignalType> = new Set<LiveSignalType>(['live-event', 'rate-limited', 'views-watched', 'run-output']);
const isPolled = (type: SignalType): type is PolledSignalType => !liveSignalTypes.has(type);

const defaultPollMs: Record<PolledSignalType, number> = {
  'stop-requested': 500,
  'run-message': 500,
  'session-stop-requested': 500,
  'approval-answered': 250,
  'run-ended': 100,
  'notification-pending': 500,
};

/**
 * The embedded coordination: signals of this process reach its listeners at once; signals of
 * other processes are found by reading the store while someone listens (a stop request on a run
 * this process leases, an answered ask, a finished run, a stopped session, a pending
 * notification): each kind at its own interval, and every kind at once when the store's external
 * version shows that another process committed. Live events of other processes are not carried:
 * with a file store each view watches its own process. No timer runs while nobody listens.
 *
 * @example
 * const coordination = createPollingCoordination({ store });
 */
export function createPollingCoordination({ store, pollMs = {}, watchMs = 20, onError = reportToDefaultLogger }: PollingCoordinationOptions): Coordination {
  const timers = new Map<PolledSignalType, NodeJS.Timeout>();
  const busy = new Set<PolledSignalType>();
  // Kinds to read again once their read under way ends: another process committed meanwhile.
  const again = new Set<PolledSignalType>();
  const listeners = createSignalListeners({
    onError,
    onChange(type, listening) {
      if (!isPolled(type)) return;
      if (!listening) {
        clearInterval(timers.get(type));
        timers.delete(type);
        again.delete(type);
        watchWhileListened();
        return;
      }
      const timer = setInterval(() => pollOnce(type, false), pollMs[type] ?? defaultPollMs[type]);
      timer.unref();
      timers.set(type, timer);
      watchWhileListened();
    },
  });

  /** Reads the store for `type`, never two reads of one kind at a time; `fresh` wants a read that starts after now. */
  function pollOnce(type: PolledSignalType, fresh: boolean): void {
    if (busy.has(type)) {
      // The read under way may have started before the commit that was just seen.
      if (fresh) again.add(type);
      return;
    }
    busy.add(type);
    poll(type)
      .catch(onError)
      .finally(() => {
        busy.delete(type);
        if (again.delete(type) && timers.has(type)) pollOnce(type, true);
      });
  }

  // Another process's commit is seen by a cheap read of the store's external version, so the
  // kinds listened to are read as soon as one wrote; their intervals stay as the backstop.
  let stopWatch: (() => void) | undefined;

  function watchWhileListened(): void {
    if (timers.size === 0) {
      stopWatch?.();
      stopWatch = undefined;
    } else {
      stopWatch ??= watchExternalVersion(
        store,
        watchMs,
        () => {
          for (const type of timers.keys()) pollOnce(type, true);
        },
        (error) => {
          // The intervals go on; a store that cannot be read is reported by them too.
          stopWatch = undefined;
          onError(error);
        },
      );
    }
  }

  /**
   * Reads the store for every key of `type` listened to, all at once: a store that batches
   * lookups (Postgres) reads a thousand runs' states with one statement, not a thousand one after
   * the other. The first failure is reported (by the caller); the other keys are read all the same.
   */
  async function poll(type: PolledSignalType): Promise<void> {
    const results = await Promise.allSettled(listeners.keys(type).map((key) => pollKey(type, key)));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async function pollKey(type: PolledSignalType, key: string): Promise<void> {
    switch (type) {
      case 'stop-requested': {
        const runs = await store.listRuns({ lease_owner: key, stop_requested: true, statuses: ['queued', 'running'] });
        for (const run of runs) listeners.dispatch({ type, run_id: run.id, owner: key, cause: run.stop_requested_by ?? 'user', reason: run.stop_reason });
        break;
      }
      case 'run-message': {
        const runs = await store.listRuns({ lease_owner: key, messages_pending: true, statuses: ['running'] });
        for (const run of runs) {
          for (const message of run.messages ?? []) {
            if (message.delivered_at === null) listeners.dispatch({ type, run_id: run.id, owner: key, message_id: message.id, interrupt: message.interrupt });
          }
        }
        break;
      }
      case 'session-stop-requested': {
        const session = await store.getSession(key);
        if (session?.user_canceled_at) listeners.dispatch({ type, session_id: key, at: session.user_canceled_at });
        break;
      }
      case 'approval-answered': {
        const approval = await store.getApproval(key);
        if (approval && approval.status !== 'pending') listeners.dispatch({ type, approval_id: key });
        break;
      }
      case 'run-ended': {
        const run = await store.getRun(key);
        if (run && isFinished(run.status)) listeners.dispatch({ type, run_id: key, parent_session_id: run.parent_session_id, status: run.status });
        break;
      }
      case 'notification-pending': {
        const runs = await store.listRuns({ parent_session_id: key, notification_pending: true, order: 'oldest' });
        for (const run of runs) listeners.dispatch({ type, run_id: run.id, parent_session_id: key });
        break;
      }
    }
  }

  return {
    publish(signal) {
      listeners.dispatch(signal);
    },
    subscribe(type, key, listener) {
      return listeners.add(type, key, listener);
    },
    async close() {
      for (const timer of timers.values()) clearInterval(timer);
      timers.clear();
      stopWatch?.();
      stopWatch = undefined;
    },
  };
}

import type { RunBus } from '../runs/run-bus.ts';
import type { Store } from '../store/store.ts';

/** Wakes the waiters of one session when its turn status changes or one of its runs ends. */
export interface SessionWakeups {
  on(sessionId: string, wake: () => void): () => void;
}

/**
 * One bus listener for all waiters, dispatching by session: thousands of sessions waiting at
 * once cost one lookup per event, not one callback per waiter.
 */
export function createSessionWakeups(bus: RunBus): SessionWakeups {
  const waiters = new Map<string, Set<() => void>>();
  let unsubscribe: (() => void) | undefined;
  const wake = (sessionId: string) => {
    const set = waiters.get(sessionId);
    if (set) for (const waiter of [...set]) waiter();
  };
  return {
    on(sessionId, callback) {
      unsubscribe ??= bus.subscribe((event) => {
        if (event.type === 'session-status') wake(event.session_id);
        else if (event.type === 'run-event' && event.event.type === 'run-end') wake(event.run.parent_session_id);
      });
      let set = waiters.get(sessionId);
      if (!set) waiters.set(sessionId, (set = new Set()));
      set.add(callback);
      return () => {
        set.delete(callback);
        if (set.size === 0 && waiters.get(sessionId) === set) waiters.delete(sessionId);
        if (waiters.size === 0 && unsubscribe) {
          unsubscribe();
          unsubscribe = undefined;
        }
      };
    },
  };
}

/** Options of {@link waitForIdle}. */
export interface WaitForIdleOptions {
  sessionId: string;
  store: Store;
  wakeups: SessionWakeups;
  /** Whether the session has a turn running or about to start. */
  isBusy: (sessionId: string) => boolean;
  signal?: AbortSignal;
  /**
   * One more look once the session seems idle: resolves true when it found something to do (a
   * notification a dead process owed, delivered now), and the wait goes on. @default none
   */
  beforeIdle?: (sessionId: string) => Promise<boolean>;
  /** Checks again at least this often, for changes made by other processes. @default 200 */
  pollMs?: number;
}

/**
 * Resolves when the session has no turn running or pending and none of its runs is queued or
 * running: what `cadre run` waits for before it returns.
 */
export async function waitForIdle({ sessionId, store, wakeups, isBusy, signal, beforeIdle, pollMs = 200 }: WaitForIdleOptions): Promise<void> {
  for (;;) {
    if (signal?.aborted) return;
    if (!isBusy(sessionId)) {
      const active = await store.listRuns({ parent_session_id: sessionId, statuses: ['queued', 'running'], limit: 1 });
      if (active.length === 0 && !isBusy(sessionId) && !(await beforeIdle?.(sessionId)) && !isBusy(sessionId)) return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, pollMs);
      const off = wakeups.on(sessionId, () => setTimeout(done, 0));
      signal?.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        off();
        signal?.removeEventListener('abort', done);
        resolve();
      }
    });
  }
}

import type { RunBus } from '../runs/run-bus.ts';
import type { Store } from '../store/store.ts';

/** Options of {@link waitForIdle}. */
export interface WaitForIdleOptions {
  sessionId: string;
  store: Store;
  bus: RunBus;
  /** Whether the session has a turn running or about to start. */
  isBusy: (sessionId: string) => boolean;
  signal?: AbortSignal;
  /** Checks again at least this often, for changes made by other processes. @default 200 */
  pollMs?: number;
}

/**
 * Resolves when the session has no turn running or pending and none of its runs is queued or
 * running: what `cadre run` waits for before it returns.
 */
export async function waitForIdle({ sessionId, store, bus, isBusy, signal, pollMs = 200 }: WaitForIdleOptions): Promise<void> {
  for (;;) {
    if (signal?.aborted) return;
    if (!isBusy(sessionId)) {
      const active = await store.listRuns({ parent_session_id: sessionId, statuses: ['queued', 'running'], limit: 1 });
      if (active.length === 0 && !isBusy(sessionId)) return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, pollMs);
      const unsubscribe = bus.subscribe((event) => {
        if (event.type === 'session-status' || (event.type === 'run-event' && event.event.type === 'run-end')) setTimeout(done, 0);
      });
      signal?.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', done);
        resolve();
      }
    });
  }
}

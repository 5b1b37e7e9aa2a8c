import type { RunManager } from '../runs/run-manager.ts';
import { isNotificationPending, type RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import { probeOwner } from '../util/owner-liveness.ts';

/** Options of {@link watchRunsElsewhere}. */
export interface WatchRunsElsewhereOptions {
  store: Store;
  runs: Pick<RunManager, 'wait'>;
  /** Delivers the session's pending notifications whose holder is gone (see `deliverPendingNotifications`). */
  deliver: (sessionId: string) => Promise<unknown>;
  /** How long after a run's end a holder on another host is presumed gone. */
  leaseMs: number;
  now: Now;
  onError: (error: unknown) => void;
}

/** Runs this process recovered that go on in another process; see {@link watchRunsElsewhere}. */
export interface RunsElsewhereWatch {
  /** Waits for the run's end, then delivers what its parent is owed. */
  watch(run: RunRecord): void;
  /** Runs of this parent session watched now, their notification included. */
  count(sessionId: string): number;
  close(): void;
}

/**
 * Crash survival of notifications for runs another process carries out (a `cadre worker`) whose
 * host died: the process that recovers their parent session watches them to their end, then
 * delivers their notification, held in the dead host's name, as recovery does. One whose holder
 * is a live process is left to it; one on another host is delivered once its lease lapsed.
 */
export function watchRunsElsewhere({ store, runs, deliver, leaseMs, now, onError }: WatchRunsElsewhereOptions): RunsElsewhereWatch {
  const controller = new AbortController();
  const watched = new Map<string, string>();
  const perSession = new Map<string, number>();

  async function follow(run: RunRecord): Promise<void> {
    const ended = await runs.wait(run.id, { signal: controller.signal });
    if (controller.signal.aborted) return;
    await deliver(ended.parent_session_id);
    const after = await store.getRun(run.id);
    if (!after || !isNotificationPending(after) || probeOwner(after.lease_owner) !== 'unknown') return;
    // Held by a process on another host: presumed gone a lease after the run's end.
    const lapsesIn = Date.parse(after.ended_at ?? '') + leaseMs - Date.parse(now()) + 100;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, lapsesIn || 0));
      controller.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    if (!controller.signal.aborted) await deliver(after.parent_session_id);
  }

  return {
    watch(run) {
      if (watched.has(run.id) || controller.signal.aborted) return;
      const sessionId = run.parent_session_id;
      watched.set(run.id, sessionId);
      perSession.set(sessionId, (perSession.get(sessionId) ?? 0) + 1);
      follow(run)
        .catch(onError)
        .finally(() => {
          watched.delete(run.id);
          const left = (perSession.get(sessionId) ?? 1) - 1;
          if (left > 0) perSession.set(sessionId, left);
          else perSession.delete(sessionId);
        });
    },

    count(sessionId) {
      return perSession.get(sessionId) ?? 0;
    },

    close() {
      controller.abort();
    },
  };
}

import type { ModelMessage } from 'ai';
import type { Coordination } from '../coordination/coordination.ts';
import type { RunBus } from '../runs/run-bus.ts';
import type { RunLedger } from '../runs/run-ledger.ts';
import { deliveryOf } from '../sessions/notifier.ts';
import { renderNotification } from '../sessions/render-notification.ts';
import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import type { AppSessions } from './app-sessions.ts';

/**
 * The notifications of an app's session (`cadre.notifications(sessionId)`): how background runs'
 * results reach an app's own loop. cadre never starts a turn of such a session; they wait here.
 *
 * Delivery contract (crash-safe, at least once, exactly once when you acknowledge after saving):
 * 1. {@link take} returns the notifications not yet acknowledged, as one user message
 *    (docs/runs-and-limits.md text), each run once per `notifications` object.
 * 2. You give them to your model and store your conversation as you always do.
 * 3. {@link ack} then marks them delivered, durably (cadre's copy of the session gets the
 *    message, and each run its `notification-deliver` event, in one commit).
 * If the app dies before `ack`, nothing is lost: the next `take` (a new request, a restarted
 * process) returns them again. Only a crash after your save and before `ack` repeats one.
 */
export interface CadreNotifications {
  /** The notifications that are pending and not yet taken through this object, as model messages (none: `[]`). */
  take(): Promise<ModelMessage[]>;
  /** Marks everything taken so far delivered, durably; resolves once that is committed. */
  ack(): Promise<void>;
  /**
   * An AI SDK `prepareStep` that appends the taken notifications to the step's messages, so a
   * background result reaches the model mid-loop (AI SDK 7 carries them to later steps). Call
   * {@link ack} once you stored the loop's messages, these included.
   */
  prepareStep(step: { messages: ModelMessage[] }): Promise<{ messages: ModelMessage[] } | undefined>;
  /**
   * Resolves when a notification is waiting to be taken (at once if one is), so an idle app can
   * wake its loop. Rejects with the signal's reason when `signal` aborts.
   */
  wait(options?: { signal?: AbortSignal }): Promise<void>;
}

/** What the notifications need from the runtime. */
export interface AppNotificationsServices {
  store: Store;
  bus: RunBus;
  ledger: RunLedger;
  /** Tells `wait` of notifications that became pending, in any process sharing the store. */
  coordination: Coordination;
  now: Now;
  sessions: AppSessions;
  /** How often `wait` looks in the store anyway, in case a signal was lost. @default 5000 */
  pollMs?: number;
}

/** A message handed out by `take`, not yet acknowledged. */
interface TakenBatch {
  runs: RunRecord[];
}

/** Creates the {@link CadreNotifications} of one app session. */
export function createAppNotifications(services: AppNotificationsServices, sessionId: string): CadreNotifications {
  const { store, bus, ledger, coordination, now } = services;
  const opening = services.sessions.open(sessionId);
  opening.catch(() => {});
  const handedOut = new Set<string>();
  let batches: TakenBatch[] = [];
  // take and ack one after another, so an ack covers exactly what was taken before it.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work, work);
    chain = next.catch(() => {});
    return next;
  };

  async function pendingRuns(): Promise<RunRecord[]> {
    const pending = await store.listRuns({ parent_session_id: sessionId, notification_pending: true, order: 'oldest' });
    const unread: RunRecord[] = [];
    for (const run of pending) {
      if (handedOut.has(run.id)) continue;
      // The app's model read the result (agent_output) before taking it: nothing left to announce.
      if (run.consumed_at !== null)
        await ledger.update(run.id, { notification: { delivered_at: null, suppressed: true }, lease_owner: null, lease_expires_at: null });
      else unread.push(run);
    }
    return unread;
  }

  async function deliver(batch: TakenBatch): Promise<void> {
    let runs = batch.runs;
    while (runs.length > 0) {
      const result = await store.commitMessage(deliveryOf({ sessionId, seq: null }, runs, renderNotification(runs), now()));
      if (result.refused.length === 0) {
        if (result.message) bus.publish({ type: 'message', message: result.message });
        for (const { run, events } of result.runs) for (const event of events) bus.publish({ type: 'run-event', run, event });
        return;
      }
      // Read (agent_output) or delivered elsewhere meanwhile: the rest is stored without them.
      const stale = new Set(result.refused);
      runs = runs.filter((run) => !stale.has(run.id));
    }
  }

  const take = () =>
    serial(async () => {
      await opening;
      const runs = await pendingRuns();
      if (runs.length === 0) return [];
      // What the app is given must survive a crash: the runs' ends may still wait for their commit.
      await store.flush();
      for (const run of runs) handedOut.add(run.id);
      batches.push({ runs });
      return [{ role: 'user', content: renderNotification(runs) } satisfies ModelMessage];
    });

  const ack = () =>
    serial(async () => {
      while (batches.length > 0) {
        await deliver(batches[0]!);
        batches = batches.slice(1);
      }
      await store.flush();
    });

  return {
    take,
    ack,

    async prepareStep({ messages }) {
      const taken = await take();
      return taken.length === 0 ? undefined : { messages: [...messages, ...taken] };
    },

    async wait({ signal } = {}) {
      signal?.throwIfAborted();
      await opening;
      for (;;) {
        let wake!: () => void;
        const woken = new Promise<void>((resolve) => (wake = resolve));
        const unsubscribe = coordination.subscribe('notification-pending', sessionId, () => wake());
        const onAbort = () => wake();
        signal?.addEventListener('abort', onAbort, { once: true });
        const timer = setTimeout(wake, services.pollMs ?? 5000);
        try {
          if ((await pendingRuns()).length > 0) return;
          await woken;
          signal?.throwIfAborted();
        } finally {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          unsubscribe();
        }
      }
    },
  };
}

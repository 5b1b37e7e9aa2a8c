import type { ModelMessage } from 'ai';
import type { RunBus } from '../runs/run-bus.ts';
import { isNotificationPending, type RunRecord } from '../store/records.ts';
import type { MessageCommit, Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import { renderNotification } from './render-notification.ts';
import type { SessionInbox } from './session-inbox.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';

/** Options of {@link createNotifier}. */
export interface NotifierOptions {
  store: Store;
  /** Where stored messages and delivery events are announced to live views. */
  bus?: RunBus;
  inbox: SessionInbox;
  now: Now;
  /** Notifications within this many ms of the first share one message. @default 250 */
  coalesceMs?: number;
  /**
   * Sessions whose notifications stay pending for someone else to take (an app's own loop takes
   * them with `cadre.notifications`). @default none
   */
  leavesPending?: (sessionId: string) => Promise<boolean>;
  /** Called after a notification message is stored for an idle session. */
  onDelivered?: (sessionId: string) => void;
  onError?: (error: unknown) => void;
}

/** Delivers the notification of finished background runs to their parent sessions. */
export interface Notifier {
  /**
   * Delivers a run's pending notification (see `isNotificationPending`): called once per run when
   * it finishes, and by recovery for notifications a dead process never delivered. Runs without
   * a pending notification, or whose delivery is already under way here, are left alone.
   */
  runFinished(run: RunRecord): Promise<void>;
  /** Deliveries to this session under way. */
  pending(sessionId: string): number;
  /** Whether this process is delivering the run's notification now. */
  holds(runId: string): boolean;
}

interface OpenMessage {
  sessionId: string;
  /** Its place in the stored conversation, once stored. */
  seq: number | null;
  /** Its writes, one after another (a joining notification rewrites it after the first). */
  writes: Promise<unknown>;
  /** Waiting in the inbox of a running loop: stored when that loop takes it. */
  waiting: { stored: Promise<void> } | null;
  /** When it was opened (the injected clock's ms). */
  openedAt: number;
  runs: RunRecord[];
  message: ModelMessage;
}

/**
 * Exactly one notification per run with a pending notification, across crashes. The run's end
 * stores the notification pending (see `notificationAtEnd`); this stores the message and marks
 * the runs it announces delivered in one commit (`Store.commitMessage`, see {@link deliveryOf}), so a crash keeps
 * both or neither, and recovery delivers what is still pending. That write is a compare-and-set:
 * a run another process delivered meanwhile is left out of the message, never announced twice.
 *
 * While the parent's loop runs, the message waits in its inbox and is stored when the loop takes
 * it, before its next model call, so the transcript keeps the order the model saw. For an idle
 * parent it is stored at once. A notification that follows within `coalesceMs`, while the message
 * has not reached a model yet, joins that same message.
 */
export function createNotifier(options: NotifierOptions): Notifier {
  const { store, inbox, now } = options;
  const coalesceMs = options.coalesceMs ?? 250;
  const report = options.onError ?? reportToDefaultLogger;
  const open = new Map<string, OpenMessage>();
  const inFlight = new Map<string, number>();
  const held = new Set<string>();

  /** Whether a new notification may still join the session's open message. */
  function canJoin(current: OpenMessage): boolean {
    if (Date.parse(now()) - current.openedAt > coalesceMs) return false;
    // Waiting in the inbox of a running loop: until that loop takes it (a model call has it then).
    if (current.waiting !== null) return inbox.holds(current.sessionId, current.message);
    // Stored for an idle session: until a turn starts (it reads the transcript).
    return !inbox.isOpen(current.sessionId);
  }

  /**
   * Stores the message with its runs and marks `fresh` delivered, in one commit; leaves out runs
   * whose notification is no longer pending. Resolves whether the message is in the transcript.
   */
  async function write(entry: OpenMessage, fresh: RunRecord[]): Promise<boolean> {
    for (;;) {
      if (fresh.length === 0) return entry.seq !== null;
      const content = renderNotification(entry.runs);
      const result = await store.commitMessage(deliveryOf(entry, fresh, content, now()));
      if (result.refused.length > 0) {
        const stale = new Set(result.refused);
        entry.runs = entry.runs.filter((run) => !stale.has(run.id));
        fresh = fresh.filter((run) => !stale.has(run.id));
        continue;
      }
      entry.message.content = content;
      entry.seq = result.message!.seq;
      options.bus?.publish({ type: 'message', message: result.message! });
      for (const { run, events } of result.runs) for (const event of events) options.bus?.publish({ type: 'run-event', run, event });
      return true;
    }
  }

  /** Queues a write of the message after its earlier ones. */
  function chain(entry: OpenMessage, fresh: RunRecord[]): Promise<boolean> {
    const next = entry.writes.then(() => write(entry, fresh));
    entry.writes = next.catch(() => {});
    return next;
  }

  function deliver(run: RunRecord): Promise<unknown> {
    const sessionId = run.parent_session_id;
    const current = open.get(sessionId);
    // Announced by the open message already (a second look found it pending before it was stored).
    if (current?.runs.some((each) => each.id === run.id)) return current.waiting?.stored ?? current.writes;
    if (current && canJoin(current)) {
      current.runs.push(run);
      current.message.content = renderNotification(current.runs);
      // In an inbox, the message is stored with all its runs when taken; stored, it is rewritten.
      return current.waiting ? current.waiting.stored : chain(current, [run]);
    }
    const entry: OpenMessage = {
      sessionId,
      seq: null,
      writes: Promise.resolve(),
      waiting: null,
      openedAt: Date.parse(now()),
      runs: [run],
      message: { role: 'user', content: renderNotification([run]) },
    };
    open.set(sessionId, entry);
    // Nothing joins it after the window: forget it then.
    setTimeout(() => {
      if (open.get(sessionId) === entry) open.delete(sessionId);
    }, coalesceMs + 1).unref();
    if (!inbox.isOpen(sessionId)) return chain(entry, [run]);
    // The session's loop is running: the message joins before its next model call and is stored
    // there. Until then the run's notification stays pending in the store, for recovery.
    let settle!: (written: Promise<boolean>) => void;
    entry.waiting = { stored: new Promise<boolean>((resolve) => (settle = resolve)).then(() => {}) };
    inbox.put(sessionId, {
      message: entry.message,
      onTaken: () => {
        const written = chain(entry, [...entry.runs]);
        settle(written);
        return written;
      },
    });
    return entry.waiting.stored;
  }

  return {
    async runFinished(run) {
      if (!isNotificationPending(run) || held.has(run.id)) return;
      const sessionId = run.parent_session_id;
      if (await options.leavesPending?.(sessionId).catch((error: unknown) => (report(error), false))) return;
      if (held.has(run.id)) return;
      held.add(run.id);
      inFlight.set(sessionId, (inFlight.get(sessionId) ?? 0) + 1);
      try {
        await deliver(run);
        if (!inbox.isOpen(sessionId)) options.onDelivered?.(sessionId);
      } catch (error) {
        report(error);
      } finally {
        held.delete(run.id);
        const left = (inFlight.get(sessionId) ?? 1) - 1;
        if (left === 0) inFlight.delete(sessionId);
        else inFlight.set(sessionId, left);
      }
    },

    pending(sessionId) {
      return inFlight.get(sessionId) ?? 0;
    },

    holds(runId) {
      return held.has(runId);
    },
  };
}

/**
 * The delivery rules of a notification, as one commit: the message (appended, or rewriting the
 * open one at `entry.seq`) and, for each run it newly announces, `notification.delivered_at`, the
 * end of the lease the run kept while its notification was pending, and a `notification-deliver`
 * event naming the message. Only a run whose notification is still pending may be marked: one
 * delivered or suppressed meanwhile (by another process) refuses the commit.
 */
export function deliveryOf(entry: { sessionId: string; seq: number | null }, fresh: readonly RunRecord[], content: unknown, at: string): MessageCommit {
  return {
    session_id: entry.sessionId,
    seq: entry.seq ?? undefined,
    role: 'user',
    content,
    created_at: at,
    runs: fresh.map((run) => ({
      id: run.id,
      check: isNotificationPending,
      patch: { notification: { delivered_at: at, suppressed: false }, lease_owner: null, lease_expires_at: null },
      events: (message) => [{ run_id: run.id, at, type: 'notification-deliver', data: { session_id: entry.sessionId, message_seq: message.seq } }],
    })),
  };
}

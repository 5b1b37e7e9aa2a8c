import type { ModelMessage } from 'ai';
import type { RunBus } from '../runs/run-bus.ts';
import type { RunLedger } from '../runs/run-ledger.ts';
import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import { renderNotification } from './render-notification.ts';
import type { SessionInbox } from './session-inbox.ts';

/** Options of {@link createNotifier}. */
export interface NotifierOptions {
  store: Store;
  /** Where stored messages are announced to live views. */
  bus?: RunBus;
  ledger: RunLedger;
  inbox: SessionInbox;
  now: Now;
  /** Notifications within this many ms of the first share one message. @default 250 */
  coalesceMs?: number;
  /** Called after a notification message is stored for an idle session. */
  onDelivered?: (sessionId: string) => void;
  onError?: (error: unknown) => void;
}

/** Delivers the notification of finished background runs to their parent sessions. */
export interface Notifier {
  /** Called once per run when it reaches a finished state. */
  runFinished(run: RunRecord): Promise<void>;
  /** Deliveries to this session under way. */
  pending(sessionId: string): number;
}

interface OpenMessage {
  /** Its place in the stored conversation, once stored. */
  seq: number | null;
  /** The write that stores it, once issued (while idle at once; from the inbox when taken). */
  storing: Promise<void> | null;
  /** Whether a model call has it (then nothing may join it). */
  taken: boolean;
  openedAt: number;
  runs: RunRecord[];
  message: ModelMessage;
}

/**
 * Exactly one notification per eligible run (a background or promoted run that did not end
 * `canceled_by_parent` and whose result was not read yet). The message is stored at once; a
 * notification that follows within `coalesceMs`, while the message has not reached a model yet,
 * joins that same message instead of making a new one. A delivery issues its writes at once and
 * never waits for an earlier one to commit (deliveries of a session keep their order because
 * they are issued in order).
 */
export function createNotifier(options: NotifierOptions): Notifier {
  const { store, ledger, inbox, now } = options;
  const coalesceMs = options.coalesceMs ?? 250;
  const report = options.onError ?? ((error: unknown) => console.error(error));
  const open = new Map<string, OpenMessage>();
  const inFlight = new Map<string, number>();

  /** Whether a new notification may still join the session's open message. */
  function canJoin(sessionId: string, current: OpenMessage): boolean {
    if (Date.now() - current.openedAt > coalesceMs) return false;
    // Waiting in the inbox of a running loop: until that loop takes it.
    if (current.storing === null) return inbox.holds(sessionId, current.message);
    // Stored for an idle session: until a turn starts.
    return !current.taken && !inbox.isOpen(sessionId);
  }

  function storeMessage(sessionId: string, entry: OpenMessage): Promise<void> {
    entry.storing = store.appendMessages([{ session_id: sessionId, role: 'user', content: String(entry.message.content), created_at: now() }]).then(([stored]) => {
      entry.seq = stored.seq;
      options.bus?.publish({ type: 'message', message: stored });
    });
    return entry.storing;
  }

  function deliver(run: RunRecord): Promise<void> {
    const sessionId = run.parent_session_id;
    const current = open.get(sessionId);
    const at = now();
    let written: Promise<void> | undefined;
    if (current && canJoin(sessionId, current)) {
      current.runs.push(run);
      current.message.content = renderNotification(current.runs);
      // In an inbox, the message is stored with its latest content when taken; stored, it is rewritten.
      written = current.storing?.then(async () => {
        const content = String(current.message.content);
        await store.updateMessageContent(sessionId, current.seq!, content);
        options.bus?.publish({ type: 'message', message: { session_id: sessionId, seq: current.seq!, role: 'user', content, created_at: at } });
      });
    } else {
      const entry: OpenMessage = { seq: null, storing: null, openedAt: Date.now(), runs: [run], message: { role: 'user', content: renderNotification([run]) }, taken: false };
      open.set(sessionId, entry);
      // Nothing joins it after the window: forget it then.
      setTimeout(() => {
        if (open.get(sessionId) === entry) open.delete(sessionId);
      }, coalesceMs + 1).unref();
      if (inbox.isOpen(sessionId)) {
        // The session's loop is running: the message joins before its next model call and is
        // stored there, so the transcript keeps the order the model saw.
        inbox.put(sessionId, {
          message: entry.message,
          onTaken: () => {
            entry.taken = true;
            return storeMessage(sessionId, entry);
          },
        });
      } else {
        written = storeMessage(sessionId, entry);
      }
    }
    // Issued together, the message and the run's delivery mark share one commit.
    const marked = ledger.update(run.id, { notification: { delivered_at: at, suppressed: false } }, { type: 'notification-deliver', data: { session_id: sessionId } });
    return Promise.all([written, marked]).then(() => {
      if (!inbox.isOpen(sessionId)) options.onDelivered?.(sessionId);
    });
  }

  return {
    async runFinished(run) {
      if (run.mode !== 'background') return;
      if (run.status === 'canceled_by_parent' || run.consumed_at !== null) {
        await ledger.update(run.id, { notification: { delivered_at: null, suppressed: true } });
        return;
      }
      const sessionId = run.parent_session_id;
      inFlight.set(sessionId, (inFlight.get(sessionId) ?? 0) + 1);
      try {
        await deliver(run);
      } catch (error) {
        report(error);
      } finally {
        const left = (inFlight.get(sessionId) ?? 1) - 1;
        if (left === 0) inFlight.delete(sessionId);
        else inFlight.set(sessionId, left);
      }
    },

    pending(sessionId) {
      return inFlight.get(sessionId) ?? 0;
    },
  };
}

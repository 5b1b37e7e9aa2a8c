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
  /** Deliveries under way, to one session or to all. */
  pending(sessionId?: string): number;
}

interface OpenMessage {
  /** Its place in the stored conversation, once stored. */
  seq: number | null;
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
 * joins that same message instead of making a new one.
 */
export function createNotifier(options: NotifierOptions): Notifier {
  const { store, ledger, inbox, now } = options;
  const coalesceMs = options.coalesceMs ?? 250;
  const report = options.onError ?? ((error: unknown) => console.error(error));
  const open = new Map<string, OpenMessage>();
  const queues = new Map<string, Promise<void>>();
  const inFlight = new Map<string, number>();
  let allInFlight = 0;

  async function deliver(run: RunRecord): Promise<void> {
    const sessionId = run.parent_session_id;
    const current = open.get(sessionId);
    const at = now();
    let stored: Promise<void> | undefined;
    if (current && Date.now() - current.openedAt <= coalesceMs && (current.seq === null ? inbox.holds(sessionId, current.message) : !current.taken && !inbox.isOpen(sessionId))) {
      current.runs.push(run);
      const content = renderNotification(current.runs);
      current.message.content = content;
      if (current.seq !== null) {
        const seq = current.seq;
        stored = store.updateMessageContent(sessionId, seq, content).then(() => {
          options.bus?.publish({ type: 'message', message: { session_id: sessionId, seq, role: 'user', content, created_at: at } });
        });
      }
    } else {
      const content = renderNotification([run]);
      const message: ModelMessage = { role: 'user', content };
      const entry: OpenMessage = { seq: null, openedAt: Date.now(), runs: [run], message, taken: false };
      open.set(sessionId, entry);
      // Nothing joins it after the window: forget it then.
      setTimeout(() => {
        if (open.get(sessionId) === entry) open.delete(sessionId);
      }, coalesceMs + 1).unref();
      const store_ = async () => {
        const [stored] = await store.appendMessages([{ session_id: sessionId, role: 'user', content: String(message.content), created_at: now() }]);
        entry.seq = stored.seq;
        options.bus?.publish({ type: 'message', message: stored });
      };
      if (inbox.isOpen(sessionId)) {
        // The session's loop is running: the message joins before its next model call and is
        // stored there, so the transcript keeps the order the model saw.
        inbox.put(sessionId, { message, onTaken: async () => { entry.taken = true; await store_(); } });
      } else {
        stored = store_();
      }
    }
    // Issued together, the message and the run's delivery mark share one commit.
    const marked = ledger.update(run.id, { notification: { delivered_at: at, suppressed: false } }, { type: 'notification-deliver', data: { session_id: sessionId } });
    await Promise.all([stored, marked]);
    if (!inbox.isOpen(sessionId)) options.onDelivered?.(sessionId);
  }

  return {
    async runFinished(run) {
      if (run.mode !== 'background') return;
      if (run.status === 'canceled_by_parent' || run.consumed_at !== null) {
        await ledger.update(run.id, { notification: { delivered_at: null, suppressed: true } });
        return;
      }
      // One session's deliveries go in order, so merging into the open message is race-free.
      const sessionId = run.parent_session_id;
      allInFlight++;
      inFlight.set(sessionId, (inFlight.get(sessionId) ?? 0) + 1);
      const previous = queues.get(sessionId) ?? Promise.resolve();
      const next = previous
        .then(() => deliver(run))
        .catch(report)
        .finally(() => {
          allInFlight--;
          const left = (inFlight.get(sessionId) ?? 1) - 1;
          if (left === 0) inFlight.delete(sessionId);
          else inFlight.set(sessionId, left);
        });
      queues.set(sessionId, next);
      await next;
      if (queues.get(sessionId) === next) queues.delete(sessionId);
    },

    pending(sessionId) {
      return sessionId === undefined ? allInFlight : (inFlight.get(sessionId) ?? 0);
    },
  };
}

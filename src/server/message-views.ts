import { notificationRun, type NotificationRun } from '../sessions/notification-runs.ts';
import type { MessageRecord, RunRecord } from '../store/records.ts';
import type { StoreView } from '../store/store-view.ts';

/**
 * A message as the API shows it: the stored record, and for a notification (the user-role message
 * that tells a parent its background runs finished) the runs it announces, as data.
 */
export interface MessageView extends MessageRecord {
  /** The runs a notification announces, in the order of the text; null for any other message. */
  notification: { runs: NotificationRun[] } | null;
}

/**
 * Which message announced which runs: each delivered notification names its message in its run's
 * `notification-deliver` event (`{session_id, message_seq}`). `runs` are runs the session started;
 * only those whose notification was delivered are read.
 */
export async function notificationsOf(store: StoreView, sessionId: string, runs: readonly RunRecord[]): Promise<Map<number, NotificationRun[]>> {
  const delivered = runs.filter((run) => run.parent_session_id === sessionId && run.notification?.delivered_at != null);
  const seqs = await Promise.all(
    delivered.map(async (run) => {
      const events = await store.listRunEvents(run.id);
      const deliver = events.find((event) => event.type === 'notification-deliver' && event.data.session_id === sessionId);
      return typeof deliver?.data.message_seq === 'number' ? deliver.data.message_seq : null;
    }),
  );
  // In the order they were announced: a run that joined an open message was delivered later.
  const order = delivered
    .map((run, index) => ({ run, seq: seqs[index] }))
    .sort((left, right) =>
      left.run.notification!.delivered_at! < right.run.notification!.delivered_at!
        ? -1
        : left.run.notification!.delivered_at! > right.run.notification!.delivered_at!
          ? 1
          : left.run.id < right.run.id
            ? -1
            : 1,
    );
  const bySeq = new Map<number, NotificationRun[]>();
  for (const { run, seq } of order) {
    if (seq === null) continue;
    if (!bySeq.has(seq)) bySeq.set(seq, []);
    bySeq.get(seq)!.push(notificationRun(run));
  }
  return bySeq;
}

/** Messages as the API shows them ({@link MessageView}), given the runs the session started. */
export async function viewMessages(
  store: StoreView,
  sessionId: string,
  messages: readonly MessageRecord[],
  runs: readonly RunRecord[],
): Promise<MessageView[]> {
  const announced = messages.some((message) => message.role === 'user') ? await notificationsOf(store, sessionId, runs) : new Map<number, NotificationRun[]>();
  return messages.map((message) => viewMessage(message, announced));
}

/**
 * One new message as the API shows it. A notification is stored in the same commit that marks
 * its runs delivered, each at or after the message's own time, so only those runs are read.
 */
export async function viewNewMessage(store: StoreView, message: MessageRecord): Promise<MessageView> {
  if (message.role !== 'user') return { ...message, notification: null };
  const runs = await store.listRuns({ parent_session_id: message.session_id });
  const candidates = runs.filter((run) => run.notification?.delivered_at != null && run.notification.delivered_at >= message.created_at);
  return viewMessage(message, candidates.length === 0 ? new Map() : await notificationsOf(store, message.session_id, candidates));
}

function viewMessage(message: MessageRecord, announced: ReadonlyMap<number, NotificationRun[]>): MessageView {
  const runs = message.role === 'user' ? announced.get(message.seq) : undefined;
  return { ...message, notification: runs === undefined ? null : { runs } };
}

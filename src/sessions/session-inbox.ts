import type { ModelMessage } from 'ai';

/** A message waiting for a session's running loop. */
export interface InboxEntry {
  message: ModelMessage;
  /**
   * Called when the message takes its place in the conversation; stores it there (it may still
   * change its content). Resolves false when the message is dropped (nothing left to say).
   */
  onTaken?: () => Promise<boolean | void>;
}

/**
 * Messages (notifications) that reach a session while its loop runs. They join the conversation
 * before the loop's next model call, and are stored at that point, so the stored transcript
 * keeps the order the model saw. What is left when the loop ends is handed back to its owner.
 */
export interface SessionInbox {
  /** Marks the session's loop as running. */
  open(sessionId: string): void;
  /** Marks it as ended; returns the entries it did not take. */
  close(sessionId: string): InboxEntry[];
  isOpen(sessionId: string): boolean;
  put(sessionId: string, entry: InboxEntry): void;
  /** Takes every waiting entry of the session, in order. */
  take(sessionId: string): InboxEntry[];
  /** Whether this exact message is still waiting (not yet sent to a model). */
  holds(sessionId: string, message: ModelMessage): boolean;
}

/** Creates a {@link SessionInbox}. */
export function createSessionInbox(): SessionInbox {
  const boxes = new Map<string, InboxEntry[]>();
  const openLoops = new Map<string, number>();
  return {
    open(sessionId) {
      openLoops.set(sessionId, (openLoops.get(sessionId) ?? 0) + 1);
    },
    close(sessionId) {
      const count = (openLoops.get(sessionId) ?? 1) - 1;
      if (count > 0) {
        openLoops.set(sessionId, count);
        return [];
      }
      openLoops.delete(sessionId);
      const left = boxes.get(sessionId) ?? [];
      boxes.delete(sessionId);
      return left;
    },
    isOpen(sessionId) {
      return openLoops.has(sessionId);
    },
    put(sessionId, entry) {
      const box = boxes.get(sessionId);
      if (box) box.push(entry);
      else boxes.set(sessionId, [entry]);
    },
    take(sessionId) {
      const box = boxes.get(sessionId);
      if (!box) return [];
      boxes.delete(sessionId);
      return box;
    },
    holds(sessionId, message) {
      return boxes.get(sessionId)?.some((entry) => entry.message === message) ?? false;
    },
  };
}

/** Takes a session's waiting messages, storing each as it joins the conversation. */
export function takeAndStore(inbox: SessionInbox, sessionId: string): ModelMessage[] | Promise<ModelMessage[]> {
  const entries = inbox.take(sessionId);
  // Most steps find nothing waiting: no promise then.
  return entries.length === 0 ? [] : storeTaken(entries);
}

async function storeTaken(entries: readonly InboxEntry[]): Promise<ModelMessage[]> {
  const messages: ModelMessage[] = [];
  for (const entry of entries) {
    if ((await entry.onTaken?.()) !== false) messages.push(entry.message);
  }
  return messages;
}

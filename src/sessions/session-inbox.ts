import type { ModelMessage } from 'ai';

/**
 * Messages that reached a session while its loop may be running (notifications), waiting to be
 * added before its next model call. The store already holds them; this is the loop's doorbell.
 */
export interface SessionInbox {
  put(sessionId: string, message: ModelMessage): void;
  /** Takes every waiting message of the session, in order. */
  take(sessionId: string): ModelMessage[];
  /** Whether this exact message is still waiting (not yet sent to a model). */
  holds(sessionId: string, message: ModelMessage): boolean;
  /** Drops what waits: the session's next turn reads it from the store instead. */
  clear(sessionId: string): void;
}

/** Creates a {@link SessionInbox}. */
export function createSessionInbox(): SessionInbox {
  const boxes = new Map<string, ModelMessage[]>();
  return {
    put(sessionId, message) {
      const box = boxes.get(sessionId);
      if (box) box.push(message);
      else boxes.set(sessionId, [message]);
    },
    take(sessionId) {
      const box = boxes.get(sessionId);
      if (!box) return [];
      boxes.delete(sessionId);
      return box;
    },
    holds(sessionId, message) {
      return boxes.get(sessionId)?.includes(message) ?? false;
    },
    clear(sessionId) {
      boxes.delete(sessionId);
    },
  };
}

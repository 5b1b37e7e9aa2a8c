/** The slots of one workflow: at most `size` of its calls have a run going; the rest wait in order. */
export interface WorkflowSlots {
  /** Resolves once a slot is free; rejects once the slots are closed. */
  acquire(): Promise<void>;
  release(): void;
  /** Rejects every waiting call, and every later one, with `error`. */
  close(error: Error): void;
}

/**
 * Creates {@link WorkflowSlots}. A workflow holds back its calls beyond the caps itself, so they
 * never wait in the run queue (`maxQueuedPerParent`): 1,000 calls wait here, not there.
 */
export function createWorkflowSlots(size: number): WorkflowSlots {
  let free = Math.max(1, size);
  const waiting: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  let closed: Error | null = null;
  return {
    acquire() {
      if (closed) return Promise.reject(closed);
      if (free > 0) {
        free--;
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
    },
    release() {
      const next = waiting.shift();
      if (next) next.resolve();
      else free++;
    },
    close(error) {
      closed = error;
      for (const entry of waiting.splice(0)) entry.reject(error);
    },
  };
}

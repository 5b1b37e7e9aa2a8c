import type { ApprovalRecord, MessageRecord, RunEventRecord, RunRecord, SessionStatus } from '../store/records.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';
import type { ActivityEventData } from '../store/run-activity.ts';

/** What happens in a cadre process, for live views (terminal, dashboard, JSON Lines). */
export type CadreEvent =
  | { type: 'run-event'; run: RunRecord; event: RunEventRecord | { type: 'activity'; at: string; data: ActivityEventData } }
  | { type: 'text-delta'; session_id: string; text: string }
  | { type: 'message'; message: MessageRecord }
  | { type: 'session-status'; session_id: string; status: SessionStatus }
  /** An ask for approval was stored, or answered (its `status` says which). */
  | { type: 'approval'; approval: ApprovalRecord };

/** A listener of {@link CadreEvent}s. */
export type CadreListener = (event: CadreEvent) => void;

/**
 * In-process publish/subscribe of cadre events. Listeners must not throw: one that does is
 * reported and removed rather than breaking the run that published.
 */
export interface RunBus {
  publish(event: CadreEvent): void;
  subscribe(listener: CadreListener): () => void;
}

/** Creates a {@link RunBus}. */
export function createRunBus({ onListenerError = reportToDefaultLogger } = {}): RunBus {
  const listeners = new Set<CadreListener>();
  return {
    publish(event) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (error) {
          listeners.delete(listener);
          onListenerError(error);
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

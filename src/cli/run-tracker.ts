import type { CadreEvent } from '../runs/run-bus.ts';
import type { RunRecord } from '../store/records.ts';
import { activityOfEventData, type ActivityEventData, type RunActivity } from '../store/run-activity.ts';

/** What one run event changed, as a view needs it. */
export interface TrackedChange {
  run: RunRecord;
  /** `run-queued`, `run-start`, `run-end`, `activity`, `tool-call-start`, ... */
  type: string;
  /** The new activity and its line, for `activity` and `tool-call-start` events. */
  activity?: ActivityEventData;
}

// Events whose record comes fresh from the store; others carry the copy a run started with.
const freshRecordEvents = new Set(['run-queued', 'run-start', 'run-end', 'warning', 'result-consume', 'notification-deliver', 'message-in', 'message-deliver']);

/**
 * The latest known state of the runs of one session tree (its runs, and the runs they started),
 * built from live {@link CadreEvent}s.
 */
export class RunTracker {
  readonly #runs = new Map<string, RunRecord>();
  readonly #sessions: Set<string>;

  /** @param sessionId the primary session whose runs are followed */
  constructor(sessionId: string) {
    this.#sessions = new Set([sessionId]);
  }

  /** Applies an event; returns what changed, or undefined when it is not about a run of this tree. */
  apply(event: CadreEvent): TrackedChange | undefined {
    if (event.type !== 'run-event') return undefined;
    const incoming = event.run;
    const known = this.#runs.get(incoming.id);
    if (!known && !this.#sessions.has(incoming.parent_session_id)) return undefined;
    this.#sessions.add(incoming.child_session_id);
    const type = event.event.type;
    let run = known && !freshRecordEvents.has(type) ? known : incoming;
    let activity: ActivityEventData | undefined;
    const data = event.event.data as Record<string, unknown>;
    let value: RunActivity | null = null;
    let text: unknown;
    if (type === 'activity') [value, text] = [activityOfEventData(data), data.text];
    else if (type === 'tool-call-start' && typeof data.tool === 'string') [value, text] = [{ kind: 'tool', tool: data.tool }, data.label];
    if (value !== null && typeof text === 'string') {
      activity = { ...value, text };
      run = { ...run, last_activity: text, activity: value };
    }
    this.#runs.set(run.id, run);
    return { run, type, activity };
  }

  /** Every run seen, oldest first. */
  list(): RunRecord[] {
    return [...this.#runs.values()].sort((left, right) => (left.id < right.id ? -1 : 1));
  }
}

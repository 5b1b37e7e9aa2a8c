import type { CadreEvent } from '../runs/run-bus.ts';

/** Events that move a run to another state: they carry the record as it is after the move. */
const transitions = new Set(['run-queued', 'run-start', 'run-end']);

/**
 * The activity line a run event tells, or null when it tells none: an `activity` event's text, or
 * the record's `last_activity` on a state change. Other events may carry the record as it was
 * when the run started, whose line is older than what a card already shows.
 */
export function activityOf(event: Extract<CadreEvent, { type: 'run-event' }>): string | null {
  if (event.event.type === 'activity') {
    const text = (event.event.data as { text?: unknown }).text;
    return typeof text === 'string' && text !== '' ? text : null;
  }
  return transitions.has(event.event.type) ? event.run.last_activity : null;
}

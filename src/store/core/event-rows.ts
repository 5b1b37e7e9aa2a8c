import type { RunEventRecord } from '../records.ts';

/** The `type` of an event row that holds several of a run's events (SQLite's `run_events`, Postgres' `run_event_rows`). */
export const packedEventsType = 'events';

/** Characters a JSON string needs escaped. */
const needsEscape = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON: quoted as it is when nothing in it needs escaping (times, event types). */
function jsonString(text: string): string {
  return needsEscape.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * One event as an element of a packed row's `data` (the JSON array {@link addRunEvents} reads):
 * `[at, type, data]`, from the event's data already encoded as JSON (each event is encoded once).
 */
export function packedEvent(at: string, type: string, json: string): string {
  return `[${jsonString(at)},${jsonString(type)},${json}]`;
}

/** A `run_events` row as read by the store: `seq, at, type, data, last_seq`. */
export type EventRow = [seq: number, at: string, type: string, data: string, lastSeq: number | null];

/**
 * Adds the events of a `run_events` row after `afterSeq` to `into`, in seq order. A row holds one
 * event (`last_seq` NULL: its columns are the event's), or several of the run's, with seqs from
 * `seq` to `last_seq` and `data` the JSON array of their [at, type, data].
 */
export function addRunEvents(into: RunEventRecord[], runId: string, row: EventRow, afterSeq: number): void {
  const [seq, at, type, data, lastSeq] = row;
  if (lastSeq === null) {
    if (seq > afterSeq) into.push({ run_id: runId, seq, at, type: type as RunEventRecord['type'], data: JSON.parse(data) as RunEventRecord['data'] });
    return;
  }
  if (lastSeq <= afterSeq) return;
  const events = JSON.parse(data) as Array<
    [at: string, type: RunEventRecord['type'], data: RunEventRecord['data']] | Pick<RunEventRecord, 'at' | 'type' | 'data'>
  >;
  for (let index = Math.max(0, afterSeq + 1 - seq); index < events.length; index++) {
    const event = events[index];
    // Objects {at, type, data} in rows written by the first build of schema 6.
    if (Array.isArray(event)) into.push({ run_id: runId, seq: seq + index, at: event[0], type: event[1], data: event[2] });
    else into.push({ run_id: runId, seq: seq + index, at: event.at, type: event.type, data: event.data });
  }
}

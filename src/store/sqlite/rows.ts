import type { SQLInputValue } from 'node:sqlite';
import type { MessageRecord, RunEventRecord, RunRecord, SessionRecord } from '../records.ts';
import { decodeActivity, encodeActivity, renderActivity, type RunActivity } from '../run-activity.ts';

type Row = Record<string, unknown>;

/** Every column of `runs`, in the order `insertRun` binds them. */
export const runColumns = [
  'id',
  'parent_session_id',
  'child_session_id',
  'parent_run_id',
  'tool_call_id',
  'agent',
  'description',
  'task',
  'context',
  'mode',
  'status',
  'depth',
  'max_turns',
  'turns',
  'created_at',
  'started_at',
  'ended_at',
  'promoted_at',
  'consumed_at',
  'last_activity',
  'result',
  'partial_result',
  'error',
  'usage',
  'warnings',
  'notification',
  'resumed_from',
  'lease_owner',
  'lease_expires_at',
  'stop_requested_at',
  'stop_requested_by',
  'stop_reason',
] as const satisfies ReadonlyArray<keyof RunRecord>;

/**
 * Fields of a run a patch may set: everything except the identity and the state. A patch sets
 * `activity`, kept in the `last_activity` column (see {@link runSqlColumn}); its text follows.
 */
export const patchableRunColumns: ReadonlySet<string> = new Set([
  ...runColumns.filter((column) => !['id', 'status', 'parent_session_id', 'child_session_id', 'last_activity'].includes(column)),
  'activity',
]);

/** The `runs` column a patched field is kept in: `activity` in `last_activity`, the others their own. */
export function runSqlColumn(field: string): string {
  return field === 'activity' ? 'last_activity' : field;
}

/**
 * Sets a patched field on a run record (a copy of its value): setting `activity` sets its text,
 * `last_activity`, too.
 */
export function setRunField(run: RunRecord, field: string, value: unknown): void {
  (run as unknown as Record<string, unknown>)[field] = copyRunValue(field, value);
  if (field === 'activity') run.last_activity = value === null || value === undefined ? null : renderActivity(value as RunActivity);
}

/** Columns of `sessions` a patch may set. */
export const patchableSessionColumns: ReadonlySet<string> = new Set([
  'agent',
  'model',
  'created_at',
  'status',
  'parent_run_id',
  'auto_resumes',
  'user_canceled_at',
]);

/**
 * The columns a patch sets, checked against `allowed` so no other key reaches the SQL, and
 * sorted so patches of the same shape share one prepared statement. Undefined values are skipped.
 */
export function patchColumns(patch: object, allowed: ReadonlySet<string>, what: string): string[] {
  const columns: string[] = [];
  // Called for every stored step: no entry pairs, and a small sort done in place.
  for (const key of Object.keys(patch)) {
    if ((patch as Record<string, unknown>)[key] === undefined) continue;
    if (!allowed.has(key)) throw new TypeError(`${what} cannot set '${key}'.`);
    let index = columns.length;
    while (index > 0 && columns[index - 1] > key) {
      columns[index] = columns[index - 1];
      index--;
    }
    columns[index] = key;
  }
  return columns;
}

const jsonRunColumns: ReadonlySet<string> = new Set(['result', 'error', 'usage', 'warnings', 'notification', 'activity']);

/** A run field as SQLite stores it. */
export function runValueToSql(column: string, value: unknown): SQLInputValue {
  if (jsonRunColumns.has(column)) return value === null || value === undefined ? null : JSON.stringify(value);
  return (value ?? null) as SQLInputValue;
}

/**
 * A copy of a run field's value that shares nothing the caller could change: the JSON fields are
 * flat objects (or an array of them), so one level of copying per object is enough.
 */
export function copyRunValue(column: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || !jsonRunColumns.has(column)) return value;
  return Array.isArray(value) ? value.map((item: unknown) => (typeof item === 'object' && item !== null ? { ...item } : item)) : { ...value };
}

/** A copy of a run that shares nothing the caller could change. */
export function copyRun(run: RunRecord): RunRecord {
  const copy: Record<string, unknown> = { ...run };
  for (const column of jsonRunColumns) copy[column] = copyRunValue(column, copy[column]);
  return copy as unknown as RunRecord;
}

/** The values of a run for an insert, in `runColumns` order. */
export function runToSql(run: RunRecord): SQLInputValue[] {
  return runColumns.map((column) => (column === 'last_activity' ? storedActivity(run) : runValueToSql(column, run[column])));
}

/** The `last_activity` column of a run: its typed activity, or (a record made without one) its text as text. */
function storedActivity(run: RunRecord): string | null {
  return encodeActivity(run.activity ?? (run.last_activity === null || run.last_activity === undefined ? null : { kind: 'text', text: run.last_activity }));
}

/** The columns of `runs` in `runColumns` order, for SELECT and RETURNING. */
export const runColumnList = runColumns.join(', ');

/**
 * A `runs` row, read as an array in `runColumnList` order, as a record. Arrays spare the
 * driver building a 32-key object per row, which costs more than the query itself.
 */
export function runFromRow(row: readonly unknown[]): RunRecord {
  const run: Record<string, unknown> = {};
  for (let index = 0; index < runColumns.length; index++) {
    const column = runColumns[index];
    const value = row[index];
    run[column] = value !== null && jsonRunColumns.has(column) ? JSON.parse(value as string) : value;
  }
  // The column keeps the typed value; a line stored before it was typed reads as text.
  const activity = decodeActivity(run.last_activity as string | null);
  run.activity = activity;
  run.last_activity = activity === null ? null : renderActivity(activity);
  return run as unknown as RunRecord;
}

/** A `sessions` row as a record. */
export function sessionFromRow(row: Row): SessionRecord {
  return {
    id: row.id as string,
    agent: row.agent as string,
    model: row.model as string,
    created_at: row.created_at as string,
    status: row.status as SessionRecord['status'],
    parent_run_id: row.parent_run_id as string | null,
    auto_resumes: row.auto_resumes as number,
    user_canceled_at: row.user_canceled_at as string | null,
  };
}

/** A `messages` row as a record. */
export function messageFromRow(row: Row): MessageRecord {
  return {
    session_id: row.session_id as string,
    seq: row.seq as number,
    role: row.role as MessageRecord['role'],
    content: JSON.parse(row.content as string),
    created_at: row.created_at as string,
  };
}

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
  const events = JSON.parse(data) as Array<[at: string, type: RunEventRecord['type'], data: RunEventRecord['data']] | Pick<RunEventRecord, 'at' | 'type' | 'data'>>;
  for (let index = Math.max(0, afterSeq + 1 - seq); index < events.length; index++) {
    const event = events[index];
    // Objects {at, type, data} in rows written by the first build of schema 6.
    if (Array.isArray(event)) into.push({ run_id: runId, seq: seq + index, at: event[0], type: event[1], data: event[2] });
    else into.push({ run_id: runId, seq: seq + index, at: event.at, type: event.type, data: event.data });
  }
}

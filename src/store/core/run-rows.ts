import type { RunRecord } from '../records.ts';
import { decodeActivity, encodeActivity, renderActivity, type RunActivity } from '../run-activity.ts';

/**
 * A value as both engines bind and return it: text, a number, or NULL. JSON fields are stored as
 * their text, so one codec serves SQLite and Postgres; each engine only types its own parameters.
 */
export type StoredValue = string | number | bigint | null;

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
  'output_schema',
  'lease_owner',
  'lease_expires_at',
  'stop_requested_at',
  'stop_requested_by',
  'stop_reason',
  'harness',
  'forked_from',
  'worktree',
  'workflow',
  'input_hash',
  'messages',
] as const satisfies ReadonlyArray<keyof RunRecord>;

/** The columns of `runs` and `sessions` that hold integers (every other one holds text, JSON as text): what an engine types its parameters by. */
export const integerColumns: ReadonlySet<string> = new Set(['depth', 'max_turns', 'turns', 'auto_resumes']);

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

const jsonRunColumns: ReadonlySet<string> = new Set([
  'result',
  'error',
  'usage',
  'warnings',
  'notification',
  'activity',
  'output_schema',
  'worktree',
  'workflow',
  'messages',
  'harness',
]);

/** A run field as stored (either engine). */
export function runValueToSql(column: string, value: unknown): StoredValue {
  if (jsonRunColumns.has(column)) return value === null || value === undefined ? null : JSON.stringify(value);
  return (value ?? null) as StoredValue;
}

/**
 * A copy of a run field's value that shares nothing the caller could change: the JSON fields are
 * flat objects (or an array of them), so one level of copying per object is enough.
 */
export function copyRunValue(column: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || !jsonRunColumns.has(column)) return value;
  // A schema and a structured value nest: they are copied whole (only runs that have them pay).
  if (column === 'output_schema' || (column === 'result' && (value as { value?: unknown }).value !== undefined)) return structuredClone(value);
  return Array.isArray(value) ? value.map((item: unknown) => (typeof item === 'object' && item !== null ? { ...item } : item)) : { ...value };
}

/** A copy of a run that shares nothing the caller could change. */
export function copyRun(run: RunRecord): RunRecord {
  const copy: Record<string, unknown> = { ...run };
  for (const column of jsonRunColumns) copy[column] = copyRunValue(column, copy[column]);
  return copy as unknown as RunRecord;
}

/** The values of a run for an insert, in `runColumns` order. */
export function runToSql(run: RunRecord): StoredValue[] {
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
    // A run nobody sent a message to has no `messages` at all, as it was made.
    if (column === 'messages' && value === null) continue;
    run[column] = value !== null && jsonRunColumns.has(column) ? JSON.parse(value as string) : value;
  }
  // The column keeps the typed value; a line stored before it was typed reads as text.
  const activity = decodeActivity(run.last_activity as string | null);
  run.activity = activity;
  run.last_activity = activity === null ? null : renderActivity(activity);
  return run as unknown as RunRecord;
}

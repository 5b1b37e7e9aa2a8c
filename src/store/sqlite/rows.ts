import type { SQLInputValue } from 'node:sqlite';
import type { MessageRecord, RunEventRecord, RunRecord, SessionRecord } from '../records.ts';

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

/** Columns of `runs` a patch may set: everything except the identity and the state. */
export const patchableRunColumns: ReadonlySet<string> = new Set(
  runColumns.filter((column) => !['id', 'status', 'parent_session_id', 'child_session_id'].includes(column)),
);

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

const jsonRunColumns: ReadonlySet<string> = new Set(['result', 'error', 'usage', 'warnings', 'notification']);

/** A run field as SQLite stores it. */
export function runValueToSql(column: string, value: unknown): SQLInputValue {
  if (jsonRunColumns.has(column)) return value === null || value === undefined ? null : JSON.stringify(value);
  return (value ?? null) as SQLInputValue;
}

/** The values of a run for an insert, in `runColumns` order. */
export function runToSql(run: RunRecord): SQLInputValue[] {
  return runColumns.map((column) => runValueToSql(column, run[column]));
}

/** A `runs` row as a record, with fresh objects for the JSON columns. */
export function runFromRow(row: Row): RunRecord {
  return {
    id: row.id as string,
    parent_session_id: row.parent_session_id as string,
    child_session_id: row.child_session_id as string,
    parent_run_id: row.parent_run_id as string | null,
    tool_call_id: row.tool_call_id as string | null,
    agent: row.agent as string,
    description: row.description as string,
    task: row.task as string,
    context: row.context as string | null,
    mode: row.mode as RunRecord['mode'],
    status: row.status as RunRecord['status'],
    depth: row.depth as number,
    max_turns: row.max_turns as number,
    turns: row.turns as number,
    created_at: row.created_at as string,
    started_at: row.started_at as string | null,
    ended_at: row.ended_at as string | null,
    promoted_at: row.promoted_at as string | null,
    consumed_at: row.consumed_at as string | null,
    last_activity: row.last_activity as string | null,
    result: parseNullable(row.result) as RunRecord['result'],
    partial_result: row.partial_result as string | null,
    error: parseNullable(row.error) as RunRecord['error'],
    usage: JSON.parse(row.usage as string) as RunRecord['usage'],
    warnings: JSON.parse(row.warnings as string) as RunRecord['warnings'],
    notification: parseNullable(row.notification) as RunRecord['notification'],
    resumed_from: row.resumed_from as string | null,
    lease_owner: row.lease_owner as string | null,
    lease_expires_at: row.lease_expires_at as string | null,
    stop_requested_at: row.stop_requested_at as string | null,
    stop_requested_by: row.stop_requested_by as RunRecord['stop_requested_by'],
    stop_reason: row.stop_reason as string | null,
  };
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

/** A `run_events` row as a record. */
export function runEventFromRow(row: Row): RunEventRecord {
  return {
    run_id: row.run_id as string,
    seq: row.seq as number,
    at: row.at as string,
    type: row.type as RunEventRecord['type'],
    data: JSON.parse(row.data as string) as RunEventRecord['data'],
  };
}

function parseNullable(value: unknown): unknown {
  return value === null || value === undefined ? null : JSON.parse(value as string);
}

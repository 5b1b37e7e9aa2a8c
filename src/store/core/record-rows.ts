import type { ApprovalPreview, ApprovalRecord, SessionRecord, Usage } from '../records.ts';

type Row = Record<string, unknown>;

/** Every column of `sessions` a new session is inserted with, in order (both engines). */
export const sessionColumns = [
  'id',
  'agent',
  'model',
  'created_at',
  'status',
  'parent_run_id',
  'auto_resumes',
  'user_canceled_at',
] as const satisfies ReadonlyArray<keyof SessionRecord>;

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

/**
 * A session's usage from its token columns (numbers, or a driver's text for BIGINT): the cache
 * counts only when some were reported, as a run's usage has them.
 */
export function usageOfRow(row: { input_tokens: unknown; output_tokens: unknown; cache_read_tokens?: unknown; cache_write_tokens?: unknown }): Usage {
  const usage: Usage = { input_tokens: Number(row.input_tokens), output_tokens: Number(row.output_tokens) };
  const read = Number(row.cache_read_tokens ?? 0);
  const written = Number(row.cache_write_tokens ?? 0);
  if (read > 0) usage.cache_read_tokens = read;
  if (written > 0) usage.cache_write_tokens = written;
  return usage;
}

/** A session as `sessionFromRow` reads it back, from the record it was created with. */
export function sessionRecord(session: SessionRecord): SessionRecord {
  return sessionFromRow(session as unknown as Row);
}

/** The columns of `approvals`, in the order {@link approvalToRow} gives their values. */
export const approvalColumns =
  'id, session_id, run_id, agent, tool, argument, risk, summary, status, created_at, resolved_at, resolved_by, always, owner, preview';

/** How many columns {@link approvalColumns} names. */
export const approvalColumnCount = approvalColumns.split(', ').length;

/** An ask's values in {@link approvalColumns} order; `always` as the engine stores a boolean, `preview` as JSON. */
export function approvalToRow(approval: ApprovalRecord, always: (value: boolean) => unknown): unknown[] {
  return [
    approval.id,
    approval.session_id,
    approval.run_id,
    approval.agent,
    approval.tool,
    approval.argument,
    approval.risk,
    approval.summary,
    approval.status,
    approval.created_at,
    approval.resolved_at,
    approval.resolved_by,
    always(approval.always),
    approval.owner,
    approval.preview === null || approval.preview === undefined ? null : JSON.stringify(approval.preview),
  ];
}

/** An `approvals` row as a record; `always` is 1 in SQLite and `true` in Postgres. */
export function approvalFromRow(row: Row): ApprovalRecord {
  return {
    id: row.id as string,
    session_id: row.session_id as string,
    run_id: (row.run_id as string | null) ?? null,
    agent: row.agent as string,
    tool: row.tool as string,
    argument: (row.argument as string | null) ?? null,
    risk: row.risk as string,
    summary: row.summary as string,
    status: row.status as ApprovalRecord['status'],
    created_at: row.created_at as string,
    resolved_at: (row.resolved_at as string | null) ?? null,
    resolved_by: (row.resolved_by as ApprovalRecord['resolved_by']) ?? null,
    always: row.always === true || row.always === 1 || row.always === 1n,
    owner: (row.owner as string | null) ?? null,
    preview: typeof row.preview === 'string' ? (JSON.parse(row.preview) as ApprovalPreview) : null,
  };
}

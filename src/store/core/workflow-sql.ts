import type { WorkflowGuard, WorkflowPatch, WorkflowQuery } from '../store.ts';
import type { StoredValue } from './run-rows.ts';
import { workflowColumnList, workflowColumns, workflowPatchFields } from './workflow-rows.ts';

/** A statement and its parameters; `placeholder(n)` is each engine's dialect (`?` or `$n`). */
export interface WorkflowStatement {
  sql: string;
  parameters: unknown[];
}

type Placeholder = (index: number) => string;

/** The INSERT of a new workflow. */
export function insertWorkflowSql(values: StoredValue[], placeholder: Placeholder): WorkflowStatement {
  return {
    sql: `INSERT INTO workflows (${workflowColumnList}) VALUES (${workflowColumns.map((_, index) => placeholder(index + 1)).join(', ')})`,
    parameters: values,
  };
}

/** The SELECT of a {@link WorkflowQuery}, newest first. */
export function listWorkflowsSql(query: WorkflowQuery, placeholder: Placeholder): WorkflowStatement {
  const parameters: unknown[] = [];
  const next = (value: unknown) => (parameters.push(value), placeholder(parameters.length));
  const where: string[] = [];
  if (query.statuses !== undefined) where.push(query.statuses.length === 0 ? '1 = 0' : `status IN (${query.statuses.map((status) => next(status)).join(', ')})`);
  if (query.session_id !== undefined) where.push(`session_id = ${next(query.session_id)}`);
  let sql = `SELECT ${workflowColumnList} FROM workflows${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC`;
  if (query.limit !== undefined) sql += ` LIMIT ${next(Math.max(0, Math.floor(query.limit)))}`;
  return { sql, parameters };
}

/** The guarded UPDATE of a workflow, RETURNING it. */
export function updateWorkflowSql(id: string, patch: WorkflowPatch, guard: WorkflowGuard, placeholder: Placeholder): WorkflowStatement {
  const fields = workflowPatchFields(patch);
  const parameters: unknown[] = [];
  const next = (value: unknown) => (parameters.push(value), placeholder(parameters.length));
  // An empty patch still reads the workflow back through the guard.
  const sets = fields.length > 0 ? fields.map(({ column, stored }) => `${column} = ${next(stored)}`) : ['id = id'];
  const where = [`id = ${next(id)}`];
  if (guard.statuses !== undefined) where.push(guard.statuses.length === 0 ? '1 = 0' : `status IN (${guard.statuses.map((status) => next(status)).join(', ')})`);
  if (guard.lease_owner !== undefined) where.push(`lease_owner = ${next(guard.lease_owner)}`);
  return { sql: `UPDATE workflows SET ${sets.join(', ')} WHERE ${where.join(' AND ')} RETURNING ${workflowColumnList}`, parameters };
}

/** The UPDATE that takes over a running workflow whose lease ended (or is the owner's already), RETURNING it. */
export function claimWorkflowSql(id: string, owner: string, expiresAt: string, expiredBefore: string, placeholder: Placeholder): WorkflowStatement {
  return {
    sql:
      `UPDATE workflows SET lease_owner = ${placeholder(1)}, lease_expires_at = ${placeholder(2)} WHERE id = ${placeholder(3)} AND status = 'running' ` +
      `AND (lease_owner IS NULL OR lease_owner = ${placeholder(4)} OR lease_expires_at IS NULL OR lease_expires_at < ${placeholder(5)}) RETURNING ${workflowColumnList}`,
    parameters: [owner, expiresAt, id, owner, expiredBefore],
  };
}

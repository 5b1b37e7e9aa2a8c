import type { RunQuery } from '../store.ts';
import { runColumnList } from '../core/run-rows.ts';

/** A run whose notification is set, not delivered and not suppressed (see `isNotificationPending`); the terms of the partial index. */
export const pgPendingNotification =
  "notification IS NOT NULL AND (notification::jsonb ->> 'delivered_at') IS NULL AND (notification::jsonb ->> 'suppressed') = 'false'";

/** The SELECT for a `RunQuery` (columns in `runColumnList` order), with its parameters. */
export function pgRunQuery(query: RunQuery): { sql: string; parameters: unknown[] } {
  const conditions: string[] = [];
  const parameters: unknown[] = [];
  const parameter = (value: unknown) => {
    parameters.push(value);
    return `$${parameters.length}`;
  };
  if (query.parent_session_id !== undefined) conditions.push(`parent_session_id = ${parameter(query.parent_session_id)}`);
  if (query.parent_run_id !== undefined) conditions.push(`parent_run_id = ${parameter(query.parent_run_id)}`);
  if (query.statuses !== undefined) conditions.push(query.statuses.length === 0 ? 'false' : `status = ANY(${parameter([...query.statuses])})`);
  if (query.workflow_id !== undefined) conditions.push(`workflow IS NOT NULL AND ((workflow::jsonb) ->> 'id') = ${parameter(query.workflow_id)}`);
  if (query.lease_owner !== undefined) conditions.push(`lease_owner = ${parameter(query.lease_owner)}`);
  if (query.stop_requested !== undefined) conditions.push(query.stop_requested ? 'stop_requested_at IS NOT NULL' : 'stop_requested_at IS NULL');
  if (query.lease_expired_before !== undefined) conditions.push(`(lease_expires_at IS NULL OR lease_expires_at < ${parameter(query.lease_expired_before)})`);
  if (query.worktree !== undefined) conditions.push(query.worktree ? 'worktree IS NOT NULL' : 'worktree IS NULL');
  if (query.notification_pending !== undefined) conditions.push(query.notification_pending ? pgPendingNotification : `NOT (${pgPendingNotification})`);
  if (query.messages_pending !== undefined) {
    const pending = `messages IS NOT NULL AND messages::jsonb @> '[{"delivered_at": null}]'`;
    conditions.push(query.messages_pending ? pending : `NOT (${pending})`);
  }
  const where = conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
  const direction = query.order === 'oldest' ? 'ASC' : 'DESC';
  let sql = `SELECT ${runColumnList} FROM runs${where} ORDER BY created_at ${direction}, id ${direction}`;
  if (query.limit !== undefined) sql += ` LIMIT ${parameter(Math.max(0, Math.floor(query.limit)))}`;
  return { sql, parameters };
}

import type { SQLInputValue } from 'node:sqlite';
import type { RunQuery } from '../store.ts';
import { runColumnList } from '../core/run-rows.ts';

/** A run whose notification is set, not delivered and not suppressed (see `isNotificationPending`). */
export const pendingNotificationSql = "json_extract(notification, '$.delivered_at') IS NULL AND json_extract(notification, '$.suppressed') = 0";

/** The SELECT for a `RunQuery` (columns in `runColumnList` order), with its parameters in order. */
export function runQuerySql(query: RunQuery): { sql: string; parameters: SQLInputValue[] } {
  const conditions: string[] = [];
  const parameters: SQLInputValue[] = [];
  if (query.parent_session_id !== undefined) {
    conditions.push('parent_session_id = ?');
    parameters.push(query.parent_session_id);
  }
  if (query.parent_run_id !== undefined) {
    conditions.push('parent_run_id = ?');
    parameters.push(query.parent_run_id);
  }
  if (query.statuses !== undefined) {
    if (query.statuses.length === 0) conditions.push('0');
    else {
      conditions.push(`status IN (${query.statuses.map(() => '?').join(', ')})`);
      parameters.push(...query.statuses);
    }
  }
  if (query.workflow_id !== undefined) {
    conditions.push("workflow IS NOT NULL AND json_extract(workflow, '$.id') = ?");
    parameters.push(query.workflow_id);
  }
  if (query.lease_owner !== undefined) {
    conditions.push('lease_owner = ?');
    parameters.push(query.lease_owner);
  }
  if (query.stop_requested !== undefined) {
    conditions.push(query.stop_requested ? 'stop_requested_at IS NOT NULL' : 'stop_requested_at IS NULL');
  }
  if (query.lease_expired_before !== undefined) {
    conditions.push('(lease_expires_at IS NULL OR lease_expires_at < ?)');
    parameters.push(query.lease_expired_before);
  }
  if (query.notification_pending !== undefined) {
    // The same terms as the partial index runs_notification_pending (migration 2), so it is used.
    conditions.push(query.notification_pending ? pendingNotificationSql : `(notification IS NULL OR NOT (${pendingNotificationSql}))`);
  }
  if (query.worktree !== undefined) conditions.push(query.worktree ? 'worktree IS NOT NULL' : 'worktree IS NULL');
  if (query.messages_pending !== undefined) {
    const pending = "EXISTS (SELECT 1 FROM json_each(messages) WHERE json_extract(value, '$.delivered_at') IS NULL)";
    conditions.push(query.messages_pending ? `messages IS NOT NULL AND ${pending}` : `(messages IS NULL OR NOT ${pending})`);
  }
  const where = conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
  const direction = query.order === 'oldest' ? 'ASC' : 'DESC';
  let sql = `SELECT ${runColumnList} FROM runs${where} ORDER BY created_at ${direction}, id ${direction}`;
  if (query.limit !== undefined) {
    sql += ' LIMIT ?';
    parameters.push(Math.max(0, Math.floor(query.limit)));
  }
  return { sql, parameters };
}

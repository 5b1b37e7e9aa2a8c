import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { SessionRuleRecord } from '../records.ts';
import type { Store } from '../store.ts';
import { approvalColumnCount, approvalColumns, approvalFromRow, approvalToRow } from '../core/record-rows.ts';

type ApprovalMethods = Pick<Store, 'insertApproval' | 'getApproval' | 'listApprovals' | 'resolveApproval' | 'listSessionRules'>;

/** What the approval methods need of the SQLite store. */
export interface SqliteApprovalDeps {
  prepared: (sql: string) => StatementSync;
  write: <T>(work: () => T) => Promise<T>;
  ensureOpen: () => void;
}

/**
 * The asks for approval and the session rules of the SQLite store. An answer is an
 * `UPDATE ... WHERE status = 'pending'` inside the store's write transaction (`BEGIN IMMEDIATE`
 * holds the file's write lock), so of racing answers from any processes exactly one changes the row.
 */
export function createSqliteApprovals({ prepared, write, ensureOpen }: SqliteApprovalDeps): ApprovalMethods {
  return {
    insertApproval(approval) {
      return write(() => {
        prepared(`INSERT INTO approvals (${approvalColumns}) VALUES (${Array.from({ length: approvalColumnCount }, () => '?').join(', ')})`).run(
          ...(approvalToRow(approval, (always) => (always ? 1 : 0)) as SQLInputValue[]),
        );
      });
    },

    async getApproval(id) {
      ensureOpen();
      const row = prepared(`SELECT ${approvalColumns} FROM approvals WHERE id = ?`).get(id);
      return row ? approvalFromRow(row) : null;
    },

    async listApprovals({ statuses, session_id, run_id, owner, limit } = {}) {
      ensureOpen();
      const where: string[] = [];
      const parameters: SQLInputValue[] = [];
      if (statuses !== undefined) {
        if (statuses.length === 0) return [];
        where.push(`status IN (${statuses.map(() => '?').join(', ')})`);
        parameters.push(...statuses);
      }
      for (const [column, value] of [
        ['session_id', session_id],
        ['run_id', run_id],
        ['owner', owner],
      ] as const) {
        if (value === undefined) continue;
        where.push(`${column} = ?`);
        parameters.push(value);
      }
      const clause = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
      const rows = prepared(`SELECT ${approvalColumns} FROM approvals${clause} ORDER BY created_at, id LIMIT ?`).all(
        ...parameters,
        limit === undefined ? -1 : Math.max(0, Math.floor(limit)),
      );
      return rows.map(approvalFromRow);
    },

    resolveApproval({ id, status, by, at, rule }) {
      return write(() => {
        const row = prepared(
          `UPDATE approvals SET status = ?, resolved_by = ?, resolved_at = ?, always = ? WHERE id = ? AND status = 'pending' RETURNING ${approvalColumns}`,
        ).get(status, by, at, rule ? 1 : 0, id);
        if (!row) return null;
        const approval = approvalFromRow(row);
        if (rule) {
          prepared('INSERT OR REPLACE INTO session_rules (session_id, rule, decision, created_at, approval_id) VALUES (?, ?, ?, ?, ?)').run(
            approval.session_id,
            rule.rule,
            rule.decision,
            at,
            id,
          );
        }
        return approval;
      });
    },

    async listSessionRules(sessionId) {
      ensureOpen();
      const rows = prepared('SELECT session_id, rule, decision, created_at, approval_id FROM session_rules WHERE session_id = ? ORDER BY created_at, rule').all(
        sessionId,
      );
      return rows.map((row) => ({ ...(row as unknown as SessionRuleRecord) }));
    },
  };
}

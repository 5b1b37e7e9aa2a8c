import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { ApprovalPreview, ApprovalRecord, SessionRuleRecord } from '../records.ts';
import type { Store } from '../store.ts';

type ApprovalMethods = Pick<Store, 'insertApproval' | 'getApproval' | 'listApprovals' | 'resolveApproval' | 'listSessionRules'>;

/** What the approval methods need of the SQLite store. */
export interface SqliteApprovalDeps {
  prepared: (sql: string) => StatementSync;
  write: <T>(work: () => T) => Promise<T>;
  ensureOpen: () => void;
}

const approvalColumns = 'id, session_id, run_id, agent, tool, argument, risk, summary, status, created_at, resolved_at, resolved_by, always, owner, preview';

/**
 * The asks for approval and the session rules of the SQLite store. An answer is an
 * `UPDATE ... WHERE status = 'pending'` inside the store's write transaction (`BEGIN IMMEDIATE`
 * holds the file's write lock), so of racing answers from any processes exactly one changes the row.
 */
export function createSqliteApprovals({ prepared, write, ensureOpen }: SqliteApprovalDeps): ApprovalMethods {
  return {
    insertApproval(approval) {
      return write(() => {
        prepared(`INSERT INTO approvals (${approvalColumns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
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
          approval.always ? 1 : 0,
          approval.owner,
          approval.preview === null ? null : JSON.stringify(approval.preview),
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
      for (const [column, value] of [['session_id', session_id], ['run_id', run_id], ['owner', owner]] as const) {
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
      const rows = prepared('SELECT session_id, rule, decision, created_at, approval_id FROM session_rules WHERE session_id = ? ORDER BY created_at, rule').all(sessionId);
      return rows.map((row) => ({ ...(row as unknown as SessionRuleRecord) }));
    },
  };
}

function approvalFromRow(row: Record<string, unknown>): ApprovalRecord {
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
    always: row.always === 1 || row.always === 1n,
    owner: (row.owner as string | null) ?? null,
    preview: typeof row.preview === 'string' ? (JSON.parse(row.preview) as ApprovalPreview) : null,
  };
}

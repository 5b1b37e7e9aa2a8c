import type pg from 'pg';
import type { SessionRuleRecord } from '../records.ts';
import { approvalColumnCount, approvalColumns, approvalFromRow, approvalToRow } from '../core/record-rows.ts';
import type { Store } from '../store.ts';
import type { PgWork, PgWorkOptions } from './pg-batches.ts';

type ApprovalMethods = Pick<Store, 'insertApproval' | 'getApproval' | 'listApprovals' | 'resolveApproval' | 'listSessionRules'>;

/**
 * Asks for approval and session rules on Postgres: writes queued in the store's batches (they
 * resolve after their commit), reads after this process's earlier writes.
 */
export function createPgApprovals({
  write,
  read,
}: {
  write: <T, R = undefined>(work: PgWork<T, R>, options?: PgWorkOptions<R>) => Promise<T>;
  read: (text: string, values?: unknown[], options?: { listing?: boolean }) => Promise<Array<Record<string, unknown>>>;
}): ApprovalMethods {
  return {
    insertApproval(approval) {
      return write((client: pg.ClientBase) =>
        client
          .query(
            `INSERT INTO approvals (${approvalColumns}) VALUES (${Array.from({ length: approvalColumnCount }, (_, index) => `$${index + 1}`).join(', ')})`,
            approvalToRow(approval, (always) => always),
          )
          .then(() => undefined),
      );
    },

    async getApproval(id) {
      const [row] = await read(`SELECT ${approvalColumns} FROM approvals WHERE id = $1`, [id]);
      return row ? approvalFromRow(row) : null;
    },

    async listApprovals({ statuses, session_id, run_id, owner, limit } = {}) {
      if (statuses !== undefined && statuses.length === 0) return [];
      const where: string[] = [];
      const parameters: unknown[] = [];
      if (statuses !== undefined) {
        parameters.push([...statuses]);
        where.push(`status = ANY($${parameters.length})`);
      }
      for (const [column, value] of [
        ['session_id', session_id],
        ['run_id', run_id],
        ['owner', owner],
      ] as const) {
        if (value === undefined) continue;
        parameters.push(value);
        where.push(`${column} = $${parameters.length}`);
      }
      let sql = `SELECT ${approvalColumns} FROM approvals${where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`} ORDER BY created_at, id`;
      if (limit !== undefined) {
        parameters.push(Math.max(0, Math.floor(limit)));
        sql += ` LIMIT $${parameters.length}`;
      }
      return (await read(sql, parameters, { listing: true })).map(approvalFromRow);
    },

    resolveApproval({ id, status, by, at, rule }) {
      // One statement: the answer, and its rule only if the answer was written (the ask was pending).
      const text = `WITH answered AS (
          UPDATE approvals SET status = $2, resolved_by = $3, resolved_at = $4, always = $5 WHERE id = $1 AND status = 'pending' RETURNING ${approvalColumns}
        ), ruled AS (
          INSERT INTO session_rules (session_id, rule, decision, created_at, approval_id)
          SELECT session_id, $6, $7, $4, $1 FROM answered WHERE $6::text IS NOT NULL
          ON CONFLICT (session_id, rule) DO UPDATE SET decision = EXCLUDED.decision, created_at = EXCLUDED.created_at, approval_id = EXCLUDED.approval_id
        )
        SELECT * FROM answered`;
      return write((client: pg.ClientBase) =>
        client
          .query(text, [id, status, by, at, rule !== undefined, rule?.rule ?? null, rule?.decision ?? null])
          .then(({ rows }) => (rows[0] ? approvalFromRow(rows[0]) : null)),
      );
    },

    async listSessionRules(sessionId) {
      const rows = await read('SELECT session_id, rule, decision, created_at, approval_id FROM session_rules WHERE session_id = $1 ORDER BY created_at, rule', [
        sessionId,
      ]);
      return rows.map((row) => ({ ...(row as unknown as SessionRuleRecord) }));
    },
  };
}

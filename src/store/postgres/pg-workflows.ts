import type pg from 'pg';
import { workflowFromRow, workflowToRow } from '../core/workflow-rows.ts';
import { claimWorkflowSql, insertWorkflowSql, listWorkflowsSql, updateWorkflowSql, type WorkflowStatement } from '../core/workflow-sql.ts';
import { whenValid } from '../core/run-fields.ts';
import type { Store } from '../store.ts';
import type { PgWork, PgWorkOptions } from './pg-batches.ts';

type WorkflowMethods = Pick<Store, 'insertWorkflow' | 'getWorkflow' | 'listWorkflows' | 'updateWorkflow' | 'claimWorkflow'>;

const placeholder = (index: number) => `$${index}`;

/** Workflows on Postgres (section 22): writes in the store's batches, reads after this process's earlier writes. */
export function createPgWorkflows({
  write,
  read,
}: {
  write: <T, R = undefined>(work: PgWork<T, R>, options?: PgWorkOptions<R>) => Promise<T>;
  read: (text: string, values?: unknown[], options?: { listing?: boolean }) => Promise<Array<Record<string, unknown>>>;
}): WorkflowMethods {
  const returning = ({ sql, parameters }: WorkflowStatement) =>
    write((client: pg.ClientBase) => client.query(sql, parameters).then(({ rows }) => (rows[0] ? workflowFromRow(rows[0]) : null)));
  return {
    insertWorkflow(workflow) {
      return whenValid(
        () => insertWorkflowSql(workflowToRow(workflow), placeholder),
        ({ sql, parameters }) => write((client: pg.ClientBase) => client.query(sql, parameters).then(() => undefined)),
      );
    },

    async getWorkflow(id) {
      const [row] = await read('SELECT * FROM workflows WHERE id = $1', [id]);
      return row ? workflowFromRow(row) : null;
    },

    async listWorkflows(query = {}) {
      const { sql, parameters } = listWorkflowsSql(query, placeholder);
      return (await read(sql, parameters, { listing: true })).map(workflowFromRow);
    },

    updateWorkflow(id, patch, guard = {}) {
      return whenValid(() => updateWorkflowSql(id, patch, guard, placeholder), returning);
    },

    claimWorkflow(id, owner, expiresAt, expiredBefore) {
      return returning(claimWorkflowSql(id, owner, expiresAt, expiredBefore, placeholder));
    },
  };
}

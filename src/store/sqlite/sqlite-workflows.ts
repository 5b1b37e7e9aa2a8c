import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { Store } from '../store.ts';
import { workflowFromRow, workflowToRow } from '../core/workflow-rows.ts';
import { claimWorkflowSql, insertWorkflowSql, listWorkflowsSql, updateWorkflowSql, type WorkflowStatement } from '../core/workflow-sql.ts';
import { whenValid } from '../core/run-fields.ts';

type WorkflowMethods = Pick<Store, 'insertWorkflow' | 'getWorkflow' | 'listWorkflows' | 'updateWorkflow' | 'claimWorkflow'>;

/** What the workflow methods need of the SQLite store. */
export interface SqliteWorkflowDeps {
  prepared: (sql: string) => StatementSync;
  write: <T>(work: () => T) => Promise<T>;
  ensureOpen: () => void;
}

const placeholder = () => '?';

/**
 * The workflows of the SQLite store (section 22). A change is an `UPDATE ... WHERE` its guard
 * inside the store's write transaction, so of racing claims from any processes exactly one wins.
 */
export function createSqliteWorkflows({ prepared, write, ensureOpen }: SqliteWorkflowDeps): WorkflowMethods {
  const returning = ({ sql, parameters }: WorkflowStatement) => {
    const row = prepared(sql).get(...(parameters as SQLInputValue[]));
    return row ? workflowFromRow(row as Record<string, unknown>) : null;
  };
  return {
    insertWorkflow(workflow) {
      return whenValid(
        () => insertWorkflowSql(workflowToRow(workflow), placeholder),
        ({ sql, parameters }) =>
          write(() => {
            prepared(sql).run(...(parameters as SQLInputValue[]));
          }),
      );
    },

    async getWorkflow(id) {
      ensureOpen();
      const row = prepared('SELECT * FROM workflows WHERE id = ?').get(id);
      return row ? workflowFromRow(row as Record<string, unknown>) : null;
    },

    async listWorkflows(query = {}) {
      ensureOpen();
      const { sql, parameters } = listWorkflowsSql(query, placeholder);
      return prepared(sql)
        .all(...(parameters as SQLInputValue[]))
        .map((row) => workflowFromRow(row as Record<string, unknown>));
    },

    updateWorkflow(id, patch, guard = {}) {
      return whenValid(
        () => updateWorkflowSql(id, patch, guard, placeholder),
        (statement) => write(() => returning(statement)),
      );
    },

    claimWorkflow(id, owner, expiresAt, expiredBefore) {
      return write(() => returning(claimWorkflowSql(id, owner, expiresAt, expiredBefore, placeholder)));
    },
  };
}

import type { RunRecord, WorkflowRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';

/** One run of a workflow as lists show it. */
export interface WorkflowRunSummary {
  id: string;
  key: string;
  agent: string;
  description: string;
  status: RunRecord['status'];
  created_at: string;
  ended_at: string | null;
}

/** A workflow with its runs: what `cadre workflows --json`, the HTTP API and exports show. */
export type WorkflowView = Omit<WorkflowRecord, 'lease_owner' | 'lease_expires_at' | 'stop_requested_at'> & { runs: WorkflowRunSummary[] };

/** The summary of a run of a workflow. */
export function workflowRunSummary(run: RunRecord): WorkflowRunSummary {
  return {
    id: run.id,
    key: run.workflow?.key ?? '',
    agent: run.agent,
    description: run.description,
    status: run.status,
    created_at: run.created_at,
    ended_at: run.ended_at,
  };
}

/** A workflow with its runs, oldest first. */
export async function workflowView(store: Pick<Store, 'listRuns'>, workflow: WorkflowRecord): Promise<WorkflowView> {
  const { lease_owner: _owner, lease_expires_at: _expires, stop_requested_at: _stop, ...fields } = workflow;
  const runs = await store.listRuns({ workflow_id: workflow.id, order: 'oldest' });
  return { ...fields, runs: runs.map(workflowRunSummary) };
}

import { Hono } from 'hono';
import type { Cadre } from '../runtime/create-cadre.ts';
import type { WorkflowRecord } from '../store/records.ts';
import { workflowView } from '../workflows/workflow-view.ts';
import { failRequest } from './request-input.ts';

/**
 * The `/api/workflows` routes (section 22): the latest workflows (of a session with `?session=`),
 * one workflow with its phases, log, runs and result, and a person's stop (`canceled_by_user`).
 */
export function createWorkflowRoutes({ cadre }: { cadre: Cadre }): Hono {
  const routes = new Hono();
  const { store } = cadre;

  async function findWorkflow(id: string): Promise<WorkflowRecord> {
    const workflow = await store.getWorkflow(id);
    if (!workflow) failRequest(404, `No workflow '${id}'.`);
    return workflow;
  }

  routes.get('/', async (context) => {
    const sessionId = context.req.query('session');
    const limit = Math.min(100, Math.max(1, Number(context.req.query('limit') ?? 20) || 20));
    const workflows = await store.listWorkflows({ session_id: sessionId, limit });
    return context.json({ workflows: await Promise.all(workflows.map((workflow) => workflowView(store, workflow))) });
  });

  routes.get('/:id', async (context) => {
    const workflow = await findWorkflow(context.req.param('id'));
    return context.json({ workflow: await workflowView(store, workflow) });
  });

  routes.post('/:id/stop', async (context) => {
    const workflow = await findWorkflow(context.req.param('id'));
    const stopped = await cadre.stopWorkflow(workflow.id, 'Stopped from the dashboard.');
    return context.json({ workflow: await workflowView(store, stopped ?? workflow) });
  });

  return routes;
}

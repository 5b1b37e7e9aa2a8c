import { Hono } from 'hono';
import { describeResolution } from '../approvals/answer-approval.ts';
import type { Cadre } from '../runtime/create-cadre.ts';
import { failRequest, readJsonObject } from './request-input.ts';

/**
 * The `/api/approvals` routes: the asks waiting for a person (`?session=ID` for one session,
 * `?status=all` for answered ones too), and a person's answer
 * (`POST /api/approvals/:id {decision: "approve"|"deny", always?}`); 409 when it was answered already.
 */
export function createApprovalRoutes({ cadre }: { cadre: Cadre }): Hono {
  const routes = new Hono();

  routes.get('/', async (context) => {
    const session = context.req.query('session') || undefined;
    const all = context.req.query('status') === 'all';
    const approvals = await cadre.store.listApprovals({ statuses: all ? undefined : ['pending'], session_id: session });
    return context.json({ approvals });
  });

  routes.get('/:id', async (context) => {
    const approval = await cadre.store.getApproval(context.req.param('id'));
    if (!approval) failRequest(404, `No approval '${context.req.param('id')}'.`);
    return context.json({ approval });
  });

  routes.post('/:id', async (context) => {
    const id = context.req.param('id');
    const body = await readJsonObject(context);
    const { decision, always } = body;
    if (decision !== 'approve' && decision !== 'deny') failRequest(400, '\'decision\' must be "approve" or "deny".');
    if (always !== undefined && typeof always !== 'boolean') failRequest(400, "'always' must be true or false.");
    if (!(await cadre.store.getApproval(id))) failRequest(404, `No approval '${id}'.`);
    const { approval, changed } = await cadre.approve(id, { decision, always: always === true });
    if (!changed) failRequest(409, `${id} was already ${describeResolution(approval)}.`);
    return context.json({ approval });
  });

  return routes;
}

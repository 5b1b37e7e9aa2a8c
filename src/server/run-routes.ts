import { Hono } from 'hono';
import type { Cadre } from '../runtime/create-cadre.ts';
import type { RunRecord } from '../store/records.ts';
import { viewRun } from '../runs/run-owner.ts';
import { viewMessages } from './message-views.ts';
import { failRequest, readJsonObject, requiredText } from './request-input.ts';
import { viewRuns } from './session-views.ts';
import { WorktreeError } from '../worktrees/worktree-error.ts';

/**
 * The `/api/runs` routes: a run with its events and nested runs, its transcript, what it changed
 * in its own worktree, a person's stop (`canceled_by_user`) and a person's message.
 */
export function createRunRoutes({ cadre }: { cadre: Cadre }): Hono {
  const routes = new Hono();
  const { store } = cadre;

  async function findRun(id: string): Promise<RunRecord> {
    const run = await store.getRun(id);
    if (!run) failRequest(404, `No run '${id}'.`);
    return run;
  }

  routes.get('/:id', async (context) => {
    const run = await findRun(context.req.param('id'));
    const [events, runs] = await Promise.all([store.listRunEvents(run.id), store.listRuns({ parent_session_id: run.child_session_id, order: 'oldest' })]);
    return context.json({ run: viewRun(run, new Date().toISOString()), events, runs: viewRuns(runs) });
  });

  routes.get('/:id/transcript', async (context) => {
    const run = await findRun(context.req.param('id'));
    const [messages, runs] = await Promise.all([store.listMessages(run.child_session_id), store.listRuns({ parent_session_id: run.child_session_id })]);
    return context.json({ run_id: run.id, session_id: run.child_session_id, messages: await viewMessages(store, run.child_session_id, messages, runs) });
  });

  // What a run with a worktree of its own changed: each file's counts and the diff, on demand.
  routes.get('/:id/worktree', async (context) => {
    const run = await findRun(context.req.param('id'));
    try {
      return context.json(await cadre.worktreeChanges(run.id));
    } catch (error) {
      if (WorktreeError.isInstance(error)) failRequest(404, error.message);
      throw error;
    }
  });

  routes.post('/:id/stop', async (context) => {
    const run = await findRun(context.req.param('id'));
    const stopped = await cadre.stopRun(run.id, { cause: 'user', reason: 'Stopped from the dashboard.' });
    return context.json({ run: stopped ?? (await findRun(run.id)) });
  });

  // A person's message to the run (docs/talking-to-runs.md): stored before the answer, 202 while
  // it waits for the run's next model call, 201 when it started a follow-up of a finished run.
  routes.post('/:id/messages', async (context) => {
    const run = await findRun(context.req.param('id'));
    const body = await readJsonObject(context);
    const message = requiredText(body, 'message');
    const interrupt = body.interrupt;
    if (interrupt !== undefined && typeof interrupt !== 'boolean') failRequest(400, "'interrupt' must be true or false.");
    const sent = await cadre.sendToRun(run.id, message, { interrupt });
    const answer = {
      kind: sent.kind,
      run: viewRun(sent.run, new Date().toISOString()),
      ...(sent.kind === 'follow-up' ? { followed: sent.followed.id } : { message: sent.message }),
      ...(sent.kind === 'running' ? { reachable: sent.reachable } : {}),
    };
    return context.json(answer, sent.kind === 'follow-up' ? 201 : 202);
  });

  return routes;
}

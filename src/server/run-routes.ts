import { Hono } from 'hono';
import type { Cadre } from '../runtime/create-cadre.ts';
import type { RunRecord } from '../store/records.ts';
import { viewRun } from '../runs/run-owner.ts';
import { viewMessages } from './message-views.ts';
import { failRequest } from './request-input.ts';
import { viewRuns } from './session-views.ts';
import { WorktreeError } from '../worktrees/worktree-error.ts';

/**
 * The `/api/runs` routes: a run with its events and nested runs, its transcript, what it changed
 * in its own worktree, and a person's stop (`canceled_by_user`).
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

  return routes;
}

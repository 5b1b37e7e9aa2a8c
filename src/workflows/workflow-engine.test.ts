import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';
import { scriptedLanguageModel, type Script } from '../testing/index.ts';
import { createCadre, createCadreRuntime, type Cadre } from '../runtime/create-cadre.ts';
import type { WorkflowApi } from './workflow-api.ts';
import { exportSession } from '../export/export-session.ts';
import { renderMarkdownExport } from '../export/render-markdown-export.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

const echo: Script = [{ turns: [{ text: 'done: {{task}}' }] }];

function makeCadre(script: Script = echo, store: Store = createSqliteStore({ path: ':memory:' }), limits = {}) {
  const cadre = createCadre({ store, model: scriptedLanguageModel(script), limits, onError: (error) => console.error(error) });
  open.push(cadre);
  return cadre;
}

describe('workflows', () => {
  it('runs agents in parallel and in a pipeline, with phases and a log, and keys each call by its path', async () => {
    const cadre = makeCadre();
    const started = await cadre.startWorkflow(
      async (w: WorkflowApi, input: { files: string[] }) => {
        w.phase('review');
        const reviews = await w.parallel(input.files.map((file) => () => w.agent('general', `Review ${file}`)));
        w.log(`${reviews.length} reviews`);
        w.phase('refine');
        const refined = await w.pipeline(
          reviews,
          (review: string) => w.agent('general', `Shorten ${review}`),
          (short: string, index: number) => w.agent('general', `Title ${index}: ${short}`),
        );
        w.phase('summary');
        return { summary: await w.agent('general', `Summarize ${refined.join('; ')}`) };
      },
      { files: ['a.ts', 'b.ts'] },
      { name: 'review' },
    );
    const outcome = await started.done;
    expect(outcome.status).toBe('completed');
    expect(outcome.output).toEqual({ summary: expect.stringContaining('done: Summarize done: Title 0: done: Shorten done: Review a.ts') });
    expect(outcome.runs.map((run) => run.key).sort()).toEqual(['#0', 'l1.0.s0#0', 'l1.0.s1#0', 'l1.1.s0#0', 'l1.1.s1#0', 'p0.0#0', 'p0.1#0']);
    const record = await started.get();
    expect(record).toMatchObject({ name: 'review', status: 'completed', input: { files: ['a.ts', 'b.ts'] }, lease_owner: null });
    expect(record.phases.map((phase) => phase.name)).toEqual(['review', 'refine', 'summary']);
    expect(record.log.map((line) => line.text)).toEqual(['2 reviews']);
    const runs = await cadre.store.listRuns({ workflow_id: started.id });
    expect(runs).toHaveLength(7);
    // Its runs report to the workflow: no notification reaches the session.
    expect(runs.every((run) => run.notification === null && run.input_hash !== null && run.parent_session_id === record.session_id)).toBe(true);
    expect((await cadre.workflows()).map((workflow) => workflow.id)).toEqual([started.id]);
    // The session's export carries the workflow with its runs by key, in JSON and in markdown.
    const exported = await exportSession(cadre.store, record.session_id);
    expect(exported.workflows).toEqual([expect.objectContaining({ id: started.id, status: 'completed', runs: expect.arrayContaining([expect.objectContaining({ key: '#0' })]) })]);
    expect(exported.workflows?.[0]).not.toHaveProperty('lease_owner');
    expect(renderMarkdownExport(exported)).toContain(`## Workflow review (${started.id})`);
  });

  it('rejects a call whose run does not complete with its id, status and error, and fails the workflow when the script does not catch it', async () => {
    const cadre = makeCadre([{ when: { user_includes: 'bad' }, turns: [{ error: { status: 400, message: 'no such thing' } }] }, ...echo]);
    const caught = await cadre.startWorkflow(async (w: WorkflowApi) => {
      try {
        await w.agent('general', 'bad task');
        return 'no';
      } catch (error) {
        return { runId: (error as { runId: string }).runId, status: (error as { status: string }).status, kind: (error as { error: { kind: string } }).error.kind };
      }
    });
    expect((await caught.done).output).toMatchObject({ runId: expect.stringMatching(/^run_/), status: 'failed', kind: 'model_error' });
    const failing = await cadre.startWorkflow(async (w: WorkflowApi) => w.agent('general', 'bad task'));
    const outcome = await failing.done;
    expect(outcome).toMatchObject({ status: 'failed', error: { kind: 'run_failed' } });
    expect(outcome.error?.message).toContain('ended failed: model_error');
  });

  it('holds back calls beyond the caps itself: 120 runs under a queue limit of 10', async () => {
    const cadre = makeCadre(echo, undefined, { maxActivePerParent: 3, maxQueuedPerParent: 10 });
    const started = await cadre.startWorkflow(async (w: WorkflowApi) => {
      const all = await w.parallel(Array.from({ length: 120 }, (_, index) => () => w.agent('general', `item ${index}`)));
      return all.length;
    });
    const outcome = await started.done;
    expect(outcome).toMatchObject({ status: 'completed', output: 120 });
    expect(outcome.runs.every((run) => run.status === 'completed')).toBe(true);
  });

  it('replays from the store: finished calls return their results without a new run, and other inputs at a key diverge', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const cadre = makeCadre(echo, store);
    let calls = 0;
    const script = async (w: WorkflowApi, input: { n: number }) => {
      calls++;
      const first = await w.agent('general', 'one');
      return `${first} / ${await w.agent('general', `two ${input.n}`)}`;
    };
    cadre.workflow('twice', script);
    const started = await cadre.startWorkflow('twice', { n: 1 });
    expect((await started.done).status).toBe('completed');
    const runs = (await cadre.store.listRuns({ workflow_id: started.id })).length;
    // The same script replayed over the finished runs (a workflow set back to running, as a crash leaves it).
    await store.updateWorkflow(started.id, { status: 'running', output: null, ended_at: null, lease_owner: null, lease_expires_at: null });
    const replay = await cadre.resumeWorkflow(started.id);
    expect(await replay.done).toMatchObject({ status: 'completed', output: 'done: one / done: two 1' });
    expect(await cadre.store.listRuns({ workflow_id: started.id })).toHaveLength(runs);
    expect(calls).toBe(2);
    // Another script under that name calls with other inputs at the second key: a divergence naming it.
    cadre.workflow('twice', async (w: WorkflowApi) => `${await w.agent('general', 'one')} / ${await w.agent('general', 'two 2')}`);
    await store.updateWorkflow(started.id, { status: 'running', output: null, ended_at: null, lease_owner: null, lease_expires_at: null });
    const diverged = await (await cadre.resumeWorkflow(started.id)).done;
    expect(diverged).toMatchObject({ status: 'failed', error: { kind: 'divergence' } });
    expect(diverged.error?.message).toContain('diverged at call #1');
    expect(await cadre.store.listRuns({ workflow_id: started.id })).toHaveLength(runs);
  });

  it('stops a workflow and its runs canceled_by_user', async () => {
    const cadre = makeCadre([{ turns: [{ text: 'slow', delay_ms: 60_000 }] }]);
    const started = await cadre.startWorkflow(async (w: WorkflowApi) => w.parallel([() => w.agent('general', 'a'), () => w.agent('general', 'b')]));
    await expect.poll(async () => (await cadre.store.listRuns({ workflow_id: started.id, statuses: ['running'] })).length).toBe(2);
    await cadre.stopWorkflow(started.id);
    const outcome = await started.done;
    expect(outcome.status).toBe('canceled_by_user');
    expect(outcome.runs.map((run) => run.status)).toEqual(['canceled_by_user', 'canceled_by_user']);
  });

  it('overlaps the stages of different items in a pipeline', async () => {
    const cadre = makeCadre([{ when: { user_includes: 'Draft slow' }, turns: [{ text: 'slow draft', delay_ms: 400 }] }, ...echo]);
    const started = await cadre.startWorkflow(async (w: WorkflowApi) =>
      w.pipeline(
        ['fast', 'slow'],
        (item: string) => w.agent('general', `Draft ${item}`),
        (draft: string) => w.agent('general', `Polish ${draft}`),
      ),
    );
    expect((await started.done).output).toEqual(['done: Polish done: Draft fast', 'done: Polish slow draft']);
    const runs = await cadre.store.listRuns({ workflow_id: started.id });
    const polishFast = runs.find((run) => run.task === 'Polish done: Draft fast')!;
    const draftSlow = runs.find((run) => run.task === 'Draft slow')!;
    // The fast item's second stage ran while the slow item was still in its first.
    expect(polishFast.ended_at! < draftSlow.ended_at!).toBe(true);
  });

  it('bounds the runs a workflow may start (maxRuns): the call beyond rejects and the workflow fails max_runs', async () => {
    const runtime = createCadreRuntime({ store: createSqliteStore({ path: ':memory:' }), model: scriptedLanguageModel(echo), onError: (error) => console.error(error) });
    open.push(runtime.cadre);
    const started = await runtime.workflows.run(
      async (w: WorkflowApi) => {
        await w.agent('general', 'one');
        await w.agent('general', 'two');
        return w.agent('general', 'three');
      },
      null,
      { source: { kind: 'script', text: '...' }, maxRuns: 2 },
    );
    const outcome = await started.done;
    expect(outcome).toMatchObject({ status: 'failed', error: { kind: 'max_runs' } });
    expect(outcome.runs).toHaveLength(2);
  });
});

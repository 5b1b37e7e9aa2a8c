import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/store.ts';
import type { ScriptedRequest, ScriptedTurn } from '../src/testing/index.ts';
import { createWorkspace, type CadreProcess, type Workspace } from './helpers/cadre-cli.ts';
import { eventually } from './helpers/eventually.ts';

let workspace: Workspace | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
  await workspace?.close();
  workspace = undefined;
});

// A review workflow of twenty lines: three reviews at once, then a summary. Between the phases it
// waits for a file, so a test can kill it exactly there.
const reviewWorkflow = `
import { existsSync, readFileSync } from 'node:fs';
const gate = async (name) => { while (!existsSync(name)) await new Promise((resolve) => setTimeout(resolve, 20)); };
export default async function review(w, input) {
  w.phase('review');
  const mark = existsSync('mark.txt') ? readFileSync('mark.txt', 'utf8').trim() : '';
  const reviews = await w.parallel(input.files.map((file) => () => w.agent('general', \`Review \${file}\${mark}\`)));
  w.log(\`\${reviews.length} reviews\`);
  await gate('between-phases.go');
  w.phase('summary');
  const summary = await w.agent('general', \`Summarize: \${reviews.join(' | ')}\`);
  return { reviews, summary };
}
`;

const files = ['a.ts', 'b.ts', 'c.ts'];
const input = JSON.stringify({ files });

/** A scripted model whose answers to tasks starting with a held prefix hang until released. */
function heldModel() {
  const held = new Set<string>();
  const respond = (request: ScriptedRequest): ScriptedTurn => {
    const task = request.messages.find((message) => message.role === 'user')?.content ?? '';
    if ([...held].some((prefix) => task.startsWith(prefix))) return { text: 'never', delay_ms: 120_000 };
    return { text: `done: ${task}` };
  };
  return { held, respond };
}

async function setUp(config?: Record<string, unknown>) {
  const model = heldModel();
  workspace = await createWorkspace({ script: model.respond, config });
  await writeFile(join(workspace.cwd, 'review.workflow.mjs'), reviewWorkflow);
  store = await openStore(workspace.database);
  return { workspace, model, store };
}

/** Model requests whose first user message is `task`: one per turn of the run that has it. */
function requestsFor(workspace: Workspace, task: string): number {
  return workspace.server.requests.filter((request) => request.messages.find((message) => message.role === 'user')?.content === task).length;
}

async function workflowIdOf(process: CadreProcess): Promise<string> {
  return (await process.waitForStderr(/Workflow (wf_\w+)/, 20_000))[1];
}

async function kill(process: CadreProcess): Promise<void> {
  process.child.kill('SIGKILL');
  expect((await process.exited).signal).toBe('SIGKILL');
}

async function expectComplete(workspace: Workspace, store: Store, workflowId: string, result: { code: number | null; stdout: string; stderr: string }) {
  expect(result.code, result.stderr).toBe(0);
  const workflow = await store.getWorkflow(workflowId);
  expect(workflow).toMatchObject({ status: 'completed', error: null });
  const reviews = files.map((file) => `done: Review ${file}`);
  expect(workflow?.output).toEqual({ reviews, summary: `done: Summarize: ${reviews.join(' | ')}` });
  expect(workflow?.phases.map((phase) => phase.name)).toEqual(['review', 'summary']);
  expect(workflow?.log.map((line) => line.text)).toEqual(['3 reviews']);
  const runs = await store.listRuns({ workflow_id: workflowId });
  // One run per call, all completed: nothing ran twice, nothing was abandoned.
  expect(runs.map((run) => run.workflow?.key).sort()).toEqual(['#0', 'p0.0#0', 'p0.1#0', 'p0.2#0']);
  expect(runs.map((run) => run.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  expect(JSON.parse(result.stdout)).toEqual(workflow?.output);
  return runs;
}

describe('cadre workflow run killed with SIGKILL, then cadre workflow resume', () => {
  it('during the first phase: finished reviews are not run again, the one going is resumed', async () => {
    const { workspace, model, store } = await setUp();
    await writeFile(join(workspace.cwd, 'between-phases.go'), '');
    model.held.add('Review c.ts');
    const first = workspace.start(['workflow', 'run', 'review.workflow.mjs', '--input', input, ...workspace.modelFlags]);
    const workflowId = await workflowIdOf(first);
    await eventually(async () => (await store.listRuns({ workflow_id: workflowId, statuses: ['completed'] })).length === 2 && requestsFor(workspace, 'Review c.ts') === 1, {
      timeout: 20_000,
      what: 'two reviews done and the third waiting for the model',
    });
    await kill(first);
    const going = (await store.listRuns({ workflow_id: workflowId, statuses: ['running'] }))[0];
    expect(going?.task).toBe('Review c.ts');
    model.held.clear();
    const resumed = await workspace.run(['workflow', 'resume', workflowId, ...workspace.modelFlags]);
    const runs = await expectComplete(workspace, store, workflowId, resumed);
    expect(requestsFor(workspace, 'Review a.ts')).toBe(1);
    expect(requestsFor(workspace, 'Review b.ts')).toBe(1);
    // The run that was going is the same run, resumed from its conversation.
    const same = runs.find((run) => run.id === going.id);
    expect(same?.warnings.map((warning) => warning.kind)).toContain('recovered');
  }, 90_000);

  it('between phases: no review runs again, the summary starts', async () => {
    const { workspace, store } = await setUp();
    const first = workspace.start(['workflow', 'run', 'review.workflow.mjs', '--input', input, ...workspace.modelFlags]);
    const workflowId = await workflowIdOf(first);
    await eventually(async () => (await store.getWorkflow(workflowId))?.log.length === 1, { timeout: 20_000, what: 'the reviews logged' });
    await kill(first);
    await writeFile(join(workspace.cwd, 'between-phases.go'), '');
    const resumed = await workspace.run(['workflow', 'resume', workflowId, ...workspace.modelFlags]);
    await expectComplete(workspace, store, workflowId, resumed);
    for (const file of files) expect(requestsFor(workspace, `Review ${file}`)).toBe(1);
  }, 90_000);

  it('while the last run works: it is resumed, and nothing before it runs again', async () => {
    const { workspace, model, store } = await setUp();
    await writeFile(join(workspace.cwd, 'between-phases.go'), '');
    model.held.add('Summarize');
    const first = workspace.start(['workflow', 'run', 'review.workflow.mjs', '--input', input, ...workspace.modelFlags]);
    const workflowId = await workflowIdOf(first);
    await eventually(() => workspace.server.requests.some((request) => request.messages[0]?.content.startsWith('Summarize')), { timeout: 20_000, what: 'the summary asked' });
    await kill(first);
    const summary = (await store.listRuns({ workflow_id: workflowId, statuses: ['running'] }))[0];
    expect(summary?.workflow?.key).toBe('#0');
    model.held.clear();
    const resumed = await workspace.run(['workflow', 'resume', workflowId, ...workspace.modelFlags]);
    const runs = await expectComplete(workspace, store, workflowId, resumed);
    expect(runs.find((run) => run.workflow?.key === '#0')?.id).toBe(summary.id);
    for (const file of files) expect(requestsFor(workspace, `Review ${file}`)).toBe(1);
  }, 90_000);

  it('during the replay itself: a second crash loses nothing either', async () => {
    const { workspace, model, store } = await setUp();
    await writeFile(join(workspace.cwd, 'between-phases.go'), '');
    model.held.add('Review c.ts');
    const first = workspace.start(['workflow', 'run', 'review.workflow.mjs', '--input', input, ...workspace.modelFlags]);
    const workflowId = await workflowIdOf(first);
    await eventually(async () => (await store.listRuns({ workflow_id: workflowId, statuses: ['completed'] })).length === 2 && requestsFor(workspace, 'Review c.ts') === 1, {
      timeout: 20_000,
      what: 'two reviews done',
    });
    await kill(first);
    // The replay takes the workflow over and resumes the held review, which still hangs: killed there.
    const replay = workspace.start(['workflow', 'resume', workflowId, ...workspace.modelFlags]);
    await eventually(() => requestsFor(workspace, 'Review c.ts') === 2, { timeout: 20_000, what: 'the replay resuming the third review' });
    expect((await store.getWorkflow(workflowId))?.lease_owner).toContain(`:${replay.child.pid}:`);
    await kill(replay);
    model.held.clear();
    const resumed = await workspace.run(['workflow', 'resume', workflowId, ...workspace.modelFlags]);
    await expectComplete(workspace, store, workflowId, resumed);
    expect(requestsFor(workspace, 'Review a.ts')).toBe(1);
    expect(requestsFor(workspace, 'Review b.ts')).toBe(1);
  }, 120_000);

  it('fails a replay that diverges, naming the first call that differs, and starts no run for it', async () => {
    const { workspace, model, store } = await setUp();
    await writeFile(join(workspace.cwd, 'between-phases.go'), '');
    model.held.add('Review c.ts');
    const first = workspace.start(['workflow', 'run', 'review.workflow.mjs', '--input', input, ...workspace.modelFlags]);
    const workflowId = await workflowIdOf(first);
    await eventually(async () => (await store.listRuns({ workflow_id: workflowId, statuses: ['completed'] })).length === 2, { timeout: 20_000, what: 'two reviews done' });
    await kill(first);
    // The script reads a file that changed since: its calls now have other tasks.
    await writeFile(join(workspace.cwd, 'mark.txt'), '!');
    const resumed = await workspace.run(['workflow', 'resume', workflowId, ...workspace.modelFlags]);
    expect(resumed.code).toBe(1);
    const workflow = await store.getWorkflow(workflowId);
    expect(workflow).toMatchObject({ status: 'failed', error: { kind: 'divergence' } });
    expect(workflow?.error?.message).toContain('diverged at call p0.0#0');
    expect(resumed.stderr).toContain('diverged at call p0.0#0');
    expect(requestsFor(workspace, 'Review a.ts!')).toBe(0);
    expect(await store.listRuns({ workflow_id: workflowId, statuses: ['queued', 'running'] })).toHaveLength(0);
  }, 90_000);
});

describe('cadre workflow run', () => {
  it('runs 200 runs under the default limits: the workflow holds back what the caps do not admit', async () => {
    const { workspace, store } = await setUp({});
    await writeFile(
      join(workspace.cwd, 'many.workflow.mjs'),
      `export default async (w, input) => (await w.parallel(Array.from({ length: input.count }, (_, index) => () => w.agent('general', 'item ' + index)))).length;`,
    );
    const result = await workspace.run(['workflow', 'run', 'many.workflow.mjs', '--input', '{"count":200}', '--json', ...workspace.modelFlags]);
    expect(result.code, result.stderr).toBe(0);
    const end = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((line) => line.type === 'workflow-end');
    expect(end).toMatchObject({ status: 'completed', output: 200 });
    const runs = await store.listRuns({ workflow_id: end.workflow_id });
    expect(runs).toHaveLength(200);
    expect(runs.every((run) => run.status === 'completed')).toBe(true);
    // No notification of its runs reached the session: the workflow read them.
    expect(runs.every((run) => run.notification === null)).toBe(true);
  }, 120_000);

  it('is stopped from a second process within 2 s: the workflow and its runs end canceled_by_user, and it exits 130', async () => {
    const { workspace, model, store } = await setUp();
    model.held.add('Review');
    const first = workspace.start(['workflow', 'run', 'review.workflow.mjs', '--input', input, ...workspace.modelFlags]);
    const workflowId = await workflowIdOf(first);
    await eventually(async () => (await store.listRuns({ workflow_id: workflowId, statuses: ['running'] })).length === 3, { timeout: 20_000, what: 'three reviews running' });
    const stop = await workspace.run(['stop', workflowId, '--db', workspace.database]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`${workflowId}  review  canceled_by_user`);
    const exited = await first.exited;
    expect(exited.code).toBe(130);
    const workflow = await store.getWorkflow(workflowId);
    expect(workflow).toMatchObject({ status: 'canceled_by_user' });
    const runs = await store.listRuns({ workflow_id: workflowId });
    expect(runs.map((run) => run.status)).toEqual(['canceled_by_user', 'canceled_by_user', 'canceled_by_user']);
    // Within 2 s of the stop reaching the store (the stopping process's own start-up aside).
    const asked = Date.parse(workflow!.stop_requested_at!);
    for (const ended of [workflow!.ended_at!, ...runs.map((run) => run.ended_at!)]) expect(Date.parse(ended) - asked).toBeLessThan(2_000);
  }, 60_000);
});

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace | undefined;
afterEach(async () => {
  await workspace?.close();
  workspace = undefined;
});

// Also part of the end-to-end pass on workers (scripts/test-e2e-workers.ts): there a workflow's
// runs are carried out by `cadre worker` processes, and the workflow waits for them in its host.
describe('cadre workflow run', () => {
  it('runs a review workflow to its output, and lists and shows it', async () => {
    workspace = await createWorkspace({ script: (request) => ({ text: `done: ${request.messages.find((message) => message.role === 'user')?.content}` }) });
    await writeFile(
      join(workspace.cwd, 'review.workflow.mjs'),
      `export default async function review(w, input) {
        w.phase('review');
        const reviews = await w.parallel(input.files.map((file) => () => w.agent('general', 'Review ' + file)));
        w.phase('summary');
        const refined = await w.pipeline(reviews, (review) => w.agent('general', 'Shorten ' + review));
        return { reviews, summary: await w.agent('general', 'Summarize: ' + refined.join(' | ')) };
      }`,
    );
    const result = await workspace.run(['workflow', 'run', 'review.workflow.mjs', '--input', '{"files":["a.ts","b.ts"]}', ...workspace.modelFlags]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      reviews: ['done: Review a.ts', 'done: Review b.ts'],
      summary: 'done: Summarize: done: Shorten done: Review a.ts | done: Shorten done: Review b.ts',
    });
    const workflowId = result.stderr.match(/Workflow (wf_\w+)/)![1];
    const [listed] = await workspace.json<Array<{ id: string; status: string; phases: Array<{ name: string }>; runs: Array<{ key: string; status: string }> }>>(['workflows']);
    expect(listed).toMatchObject({ id: workflowId, status: 'completed', phases: [{ name: 'review' }, { name: 'summary' }] });
    expect(listed.runs.map((run) => run.key).sort()).toEqual(['#0', 'l1.0.s0#0', 'l1.1.s0#0', 'p0.0#0', 'p0.1#0']);
    expect(listed.runs.every((run) => run.status === 'completed')).toBe(true);
    const shown = await workspace.run(['workflow', 'show', workflowId, '--db', workspace.database]);
    expect(shown.stdout).toContain(`${workflowId}  review  completed`);
    expect(shown.stdout).toContain('phases:  review → summary');
  }, 60_000);
});

import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../agents/agent-definition.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { type Script, scriptedLanguageModel } from '../testing/index.ts';
import { type Cadre, createCadre } from './create-cadre.ts';
import { toolOutputs } from './runtime-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

const orchestrator = defineAgent({ name: 'orchestrator', description: 'Runs workflows.', mode: 'primary', tools: ['workflow'], system: 'Orchestrator agent.' });
const reviewer = defineAgent({ name: 'reviewer', description: 'Reviews one file.', mode: 'subagent', system: 'Reviewer agent.' });

const review = `w.phase('review');
const reviews = await w.parallel(input.files.map((file) => () => w.agent('reviewer', 'Review ' + file)));
return { reviews };`;
const escapingScript = `await w.agent('reviewer', 'Review x.ts'); return this.constructor.constructor('return process')().env;`;

const script: Script = [
  { when: { system_includes: 'Reviewer agent' }, turns: [{ text: 'reviewed: {{task}}', delay_ms: 20 }] },
  {
    when: { system_includes: 'Orchestrator agent' },
    turns: [
      {
        tool_calls: [
          { name: 'workflow', arguments: { script: review, input: { files: ['a.ts', 'b.ts', 'c.ts'] } } },
          { name: 'workflow', arguments: { script: escapingScript } },
        ],
      },
      { text: 'Done.' },
    ],
  },
  { when: { has_tool: 'workflow' }, turns: [{ text: 'I have the workflow tool.' }] },
  { turns: [{ text: 'No workflow tool here.' }] },
];

function makeCadre(store = createSqliteStore({ path: ':memory:' })) {
  const cadre = createCadre({
    store,
    model: scriptedLanguageModel(script),
    agents: [orchestrator, reviewer],
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return cadre;
}

describe('the workflow tool in a session', { timeout: 60_000 }, () => {
  it('runs a model-written w.parallel over three agents and returns a line per run and the JSON value; an escaping script beside it gets a tool error', async () => {
    const cadre = makeCadre();
    const session = await cadre.createSession({ agent: 'orchestrator' });
    await cadre.send(session.id, 'Review the files.');
    await cadre.waitForIdle(session.id);
    const [output] = toolOutputs(await cadre.store.listMessages(session.id), 'workflow');
    const lines = output.split('\n');
    expect(lines.slice(0, 3)).toEqual([expect.stringMatching(/^workflow_id: wf_/), 'status: completed', 'runs: 3']);
    expect(lines.slice(3, 6).sort()).toEqual([
      expect.stringMatching(/^run: run_\w+ \| reviewer \| completed \| p0\.0#0$/),
      expect.stringMatching(/^run: run_\w+ \| reviewer \| completed \| p0\.1#0$/),
      expect.stringMatching(/^run: run_\w+ \| reviewer \| completed \| p0\.2#0$/),
    ]);
    expect(JSON.parse(lines.slice(7).join('\n'))).toEqual({ reviews: ['reviewed: Review a.ts', 'reviewed: Review b.ts', 'reviewed: Review c.ts'] });

    const failed = (await cadre.store.listMessages(session.id))
      .filter((message) => message.role === 'tool')
      .flatMap((message) => message.content as Array<{ type: string; toolName: string; output: { type: string; value: unknown } }>)
      .filter((part) => part.toolName === 'workflow' && part.output.type === 'error-text');
    expect(failed).toHaveLength(1);
    expect(String(failed[0].output.value)).toMatch(
      /status: failed\nerror: script_error: .*'process' is not defined\nruns: 1\nrun: run_\w+ \| reviewer \| completed \| #0/,
    );

    const workflows = await cadre.workflows();
    expect(workflows.map((workflow) => workflow.status).sort()).toEqual(['completed', 'failed']);
    expect(workflows.map((workflow) => workflow.source).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      { kind: 'script', text: escapingScript },
      { kind: 'script', text: review },
    ]);
    const runs = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(runs).toHaveLength(4);
    expect(runs.every((run) => run.status === 'completed' && run.workflow !== null)).toBe(true);
  });

  it('replays a model-written workflow from its stored text: the same output, no run made again', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const cadre = makeCadre(store);
    const session = await cadre.createSession({ agent: 'orchestrator' });
    await cadre.send(session.id, 'Review the files.');
    await cadre.waitForIdle(session.id);
    const [completed] = (await cadre.workflows()).filter((workflow) => workflow.status === 'completed');
    const runs = await cadre.store.listRuns({ workflow_id: completed.id });
    // Set back to running, as a crash leaves it: the replay finds the script by its stored text alone.
    await store.updateWorkflow(completed.id, { status: 'running', output: null, ended_at: null, lease_owner: null, lease_expires_at: null });
    const replay = await cadre.resumeWorkflow(completed.id);
    expect(await replay.done).toMatchObject({ status: 'completed', output: completed.output });
    expect((await cadre.store.listRuns({ workflow_id: completed.id })).map((run) => run.id).sort()).toEqual(runs.map((run) => run.id).sort());
    // cadre serve replays them at start (resumeWorkflows with files); a library process without it does not.
    await store.updateWorkflow(completed.id, { status: 'running', output: null, ended_at: null, lease_owner: null, lease_expires_at: null });
    expect(await cadre.resumeWorkflows()).toEqual([]);
    expect(await cadre.resumeWorkflows({ files: true })).toEqual([completed.id]);
    await expect.poll(async () => (await store.getWorkflow(completed.id))?.status, { timeout: 15_000 }).toBe('completed');
    expect((await store.getWorkflow(completed.id))?.output).toEqual(completed.output);
  });

  it('is not given to an agent that does not list it', async () => {
    const cadre = makeCadre();
    const session = await cadre.createSession();
    await cadre.send(session.id, 'Hello.');
    await cadre.waitForIdle(session.id);
    const messages = await cadre.store.listMessages(session.id);
    expect(JSON.stringify(messages.at(-1)?.content)).toContain('No workflow tool here.');
  });
});

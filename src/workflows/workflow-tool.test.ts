import { describe, expect, it } from 'vitest';
import { toolInfo } from '../tools/define-tool.ts';
import type { RunWorkflowOptions, WorkflowApi, WorkflowEngine, WorkflowOutcome, WorkflowRunLine } from './workflow-api.ts';
import { createWorkflowTool } from './workflow-tool.ts';

/** An engine that runs the script at once with a w whose runs answer `agent: task`, and reports them. */
function fakeEngine() {
  const started: RunWorkflowOptions[] = [];
  const engine: WorkflowEngine = {
    async run(script, input, options) {
      started.push(options);
      const runs: WorkflowRunLine[] = [];
      const w: WorkflowApi = {
        async agent(agent, task) {
          runs.push({ run_id: `run_${runs.length + 1}`, key: `#${runs.length}`, agent, status: 'completed' });
          return `${agent}: ${task}`;
        },
        parallel: (thunks) => Promise.all(thunks.map((thunk) => thunk(w))),
        pipeline: async () => [],
        phase() {},
        log() {},
      };
      const done: Promise<WorkflowOutcome> = Promise.resolve(script(w, input)).then(
        (output) => ({ id: 'wf_1', status: 'completed', output, error: null, runs }),
        (error: Error & { kind?: string }) => ({
          id: 'wf_1',
          status: 'failed',
          output: null,
          error: { kind: error.kind ?? 'error', message: error.message },
          runs,
        }),
      );
      return { id: 'wf_1', done, stop: async () => {} };
    },
  };
  return { engine, started };
}

const scope = { sessionId: 'ses_1', depth: 0, parentRunId: null };
const limits = { maxWorkflowRuns: 100, maxResultChars: 8000 };
const sandbox = { cpuMs: 2_000, idleMs: 2_000 };

function execute(tool: object, input: unknown) {
  return toolInfo(tool)!.executeParsed(toolInfo(tool)!.parse(input), { toolCallId: 'call_1', messages: [], context: undefined });
}

describe('the workflow tool', { timeout: 60_000 }, () => {
  it('runs the script as a workflow of the caller and returns a line per run, then the value as JSON', async () => {
    const { engine, started } = fakeEngine();
    const tool = createWorkflowTool({ engine, limits, sandbox }, scope);
    const script = `return w.parallel(input.map((file) => () => w.agent('reviewer', 'Review ' + file)));`;
    const output = await execute(tool, { script, input: ['a.ts', 'b.ts', 'c.ts'] });
    expect(output).toBe(
      [
        'workflow_id: wf_1',
        'status: completed',
        'runs: 3',
        'run: run_1 | reviewer | completed | #0',
        'run: run_2 | reviewer | completed | #1',
        'run: run_3 | reviewer | completed | #2',
        '',
        JSON.stringify(['reviewer: Review a.ts', 'reviewer: Review b.ts', 'reviewer: Review c.ts'], null, 2),
      ].join('\n'),
    );
    expect(started[0]).toMatchObject({
      source: { kind: 'script', text: script },
      name: 'script',
      sessionId: 'ses_1',
      parentRunId: null,
      depth: 0,
      maxRuns: 100,
    });
  });

  it('gives a tool error, with the runs it started, for a script that throws or escapes', async () => {
    const { engine } = fakeEngine();
    const tool = createWorkflowTool({ engine, limits, sandbox }, scope);
    const error = await Promise.resolve(
      execute(tool, { script: `await w.agent('a', 'b'); return this.constructor.constructor('return process')().env;` }),
    ).catch((thrown: unknown) => thrown as Error);
    expect(String(error)).toBe(
      [
        'workflow_id: wf_1',
        'status: failed',
        "error: threw: The script threw ReferenceError: 'process' is not defined",
        'runs: 1',
        'run: run_1 | a | completed | #0',
      ].join('\n'),
    );
  });

  it('refuses an empty script saying what to write', async () => {
    const { engine } = fakeEngine();
    const tool = createWorkflowTool({ engine, limits, sandbox }, scope);
    expect(() => toolInfo(tool)!.parse({ script: '' })).toThrow(/body of an async function of w and input/);
  });
});

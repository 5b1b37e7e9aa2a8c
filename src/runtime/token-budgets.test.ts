import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../agents/agent-definition.ts';
import type { Limits } from '../config/limits.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type ScriptedRequest, type ScriptedTurn } from '../testing/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { createCadre, type Cadre } from './create-cadre.ts';
import { toolOutputs } from './runtime-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

/** A subagent that works with one tool, step after step. */
const worker = defineAgent({ name: 'worker', description: 'Works in steps.', system: 'You are the worker.', tools: ['ping'], mode: 'subagent', maxTurns: 50 });
const ping = defineTool({ name: 'ping', description: 'Answers pong.', inputSchema: z.object({}), execute: () => 'pong' });

function makeCadre(script: (request: ScriptedRequest) => ScriptedTurn, limits: Partial<Limits>) {
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    model: scriptedLanguageModel(script),
    agents: [worker],
    tools: { ping },
    limits,
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return cadre;
}

const isWorker = (request: ScriptedRequest) => request.system.includes('You are the worker');
/** Every worker step: 100 tokens, some text, and another tool call (it would never stop by itself). */
const workerStep = (request: ScriptedRequest): ScriptedTurn => ({
  text: `Step ${request.turn + 1} done.`,
  tool_calls: [{ name: 'ping', arguments: {} }],
  usage: { input_tokens: 80, output_tokens: 20 },
});

describe('limits.maxTokensPerRun', () => {
  it('ends a run past its budget failed / budget_exceeded after the step that crossed it, with its partial result', async () => {
    let workerCalls = 0;
    const cadre = makeCadre(
      (request) => {
        if (isWorker(request)) {
          workerCalls++;
          return workerStep(request);
        }
        if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'worker', task: 'Work until done' } }] };
        return { text: 'The worker ran out of budget.' };
      },
      { maxTokensPerRun: 250 },
    );
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'go');
    expect(turn.status).toBe('completed');
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    // 100, 200, 300: the third step crossed 250 and completed; no fourth model call was made.
    expect(workerCalls).toBe(3);
    expect(run).toMatchObject({ status: 'failed', turns: 3, usage: { input_tokens: 240, output_tokens: 60 }, partial_result: 'Step 3 done.' });
    expect(run.error).toEqual({ kind: 'budget_exceeded', message: 'The run used 300 tokens of its budget of 250 (limits.maxTokensPerRun).' });
    const [output] = toolOutputs(await cadre.store.listMessages(session.id), 'agent');
    expect(output).toContain('status: failed\nerror: budget_exceeded: The run used 300 tokens of its budget of 250 (limits.maxTokensPerRun).');
    expect(output).toContain('Partial result (the run did not finish):\nStep 3 done.');
  });

  it('lets a run whose final answer crossed the budget complete: there was no further call to stop', async () => {
    const cadre = makeCadre(
      (request) => {
        if (isWorker(request)) return { text: 'All done in one go.', usage: { input_tokens: 900, output_tokens: 100 } };
        if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'worker', task: 'One step' } }] };
        return { text: 'ok' };
      },
      { maxTokensPerRun: 500 },
    );
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run).toMatchObject({ status: 'completed', error: null, result: { text: 'All done in one go.' } });
  });

  it('shows the tokens of each run and its budget in agent_list', async () => {
    const cadre = makeCadre(
      (request) => {
        if (isWorker(request)) return request.turn === 0 ? workerStep(request) : { text: 'Finished.', usage: { input_tokens: 30, output_tokens: 5 } };
        if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'worker', task: 'Two steps', description: 'two steps' } }] };
        if (request.turn === 1) return { tool_calls: [{ name: 'agent_list', arguments: { status: 'all' } }] };
        return { text: 'listed' };
      },
      { maxTokensPerRun: 1000, maxTokensPerSession: 5000 },
    );
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    const [listing] = toolOutputs(await cadre.store.listMessages(session.id), 'agent_list');
    const [line, usageLine, budgetLine] = listing.split('\n');
    expect(line).toMatch(new RegExp(`^${run.id} \\| completed \\| worker \\| two steps \\| \\d+s \\| latest: .* \\| tokens: 135 of 1000$`));
    expect(usageLine).toBe('(usage of all 1 runs of this session: 110 input, 25 output tokens)');
    // The primary agent's own two calls so far count too (the scripted model's default usage).
    expect(budgetLine).toMatch(/^\(session budget: (\d+) of 5000 tokens used, primary agent and all runs included\)$/);
    const used = Number(/budget: (\d+)/.exec(budgetLine)![1]);
    expect(used).toBeGreaterThan(135);
  });
});

describe('limits.maxTokensPerSession', () => {
  it('ends parallel runs once their session spent its budget, fails a queued one without a model call, and refuses new runs', async () => {
    const workerCallsByTask = new Map<string, number>();
    const cadre = makeCadre(
      (request) => {
        if (isWorker(request)) {
          const task = String(request.messages.find((message) => message.role === 'user')?.content);
          workerCallsByTask.set(task, (workerCallsByTask.get(task) ?? 0) + 1);
          return { ...workerStep(request), delay_ms: 5 };
        }
        const usage = { input_tokens: 40, output_tokens: 10 };
        if (request.turn === 0) {
          const tasks = ['A', 'B', 'C'].map((name) => ({ agent: 'worker', task: `Task ${name}`, description: `task ${name}` }));
          return { tool_calls: [{ name: 'agent_parallel', arguments: { tasks } }], usage };
        }
        if (request.turn === 1) return { tool_calls: [{ name: 'agent', arguments: { agent: 'worker', task: 'Task D' } }], usage };
        return { text: 'The budget is spent.', usage };
      },
      // Two run at once; the third waits for a slot.
      { maxTokensPerSession: 1000, maxActivePerParent: 2 },
    );
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'go');
    expect(turn.status).toBe('completed');
    await cadre.waitForIdle(session.id);

    const runs = await cadre.store.listRuns({ parent_session_id: session.id, order: 'oldest' });
    // Task D was refused: no run was made for it.
    expect(runs.map((run) => run.task)).toEqual(['Task A', 'Task B', 'Task C']);
    for (const run of runs) {
      expect(run.status).toBe('failed');
      expect(run.error?.kind).toBe('budget_exceeded');
      expect(run.error?.message).toMatch(/^The session used \d+ tokens of its budget of 1000 \(limits\.maxTokensPerSession\)\.$/);
    }
    const [first, second, queued] = runs;
    // The first two ran until the session's total (50 of the primary's first call + theirs) reached
    // 1000 after 5 steps each; a step already asked for when the other crossed it completes.
    expect(first.turns + second.turns).toBeGreaterThanOrEqual(10);
    expect(first.turns + second.turns).toBeLessThanOrEqual(11);
    expect(first.partial_result).toMatch(/^Step \d+ done\.$/);
    // The third started after the budget was spent: not one model call.
    expect(queued.turns).toBe(0);
    expect(workerCallsByTask.get('Task C')).toBeUndefined();

    const messages = await cadre.store.listMessages(session.id);
    const errors = messages
      .filter((message) => message.role === 'tool')
      .flatMap((message) => message.content as Array<{ type: string; toolName: string; output: { type: string; value: unknown } }>)
      .filter((part) => part.toolName === 'agent' && part.output.type === 'error-text')
      .map((part) => String(part.output.value));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^This session's token budget is spent: \d+ of 1000 tokens used \(limits\.maxTokensPerSession\), so no run was started\. Answer with what you have; a person can raise limits\.maxTokensPerSession\.$/,
    );

    // The primary agent's own calls are stored with the session: three calls of 50 tokens.
    expect(await cadre.store.getSessionUsage(session.id)).toEqual({ input_tokens: 120, output_tokens: 30 });
    const tokens = await cadre.sessionTokens(session.id);
    expect(tokens).toMatchObject({ session_id: session.id, agent: { input_tokens: 120, output_tokens: 30 }, budget: 1000 });
    // At most one step per running run past the budget: the ones already asked for when it was crossed.
    expect(tokens.total).toBeGreaterThanOrEqual(1000);
    expect(tokens.total - 50).toBeLessThanOrEqual(1000 + 2 * 100);
  });

  it('refuses agent_parallel once for the whole call when the budget is already spent', async () => {
    const cadre = makeCadre(
      (request) => {
        if (isWorker(request)) return { text: 'never asked' };
        if (request.turn === 0) {
          const tasks = [
            { agent: 'worker', task: 'X' },
            { agent: 'worker', task: 'Y' },
          ];
          return { tool_calls: [{ name: 'agent_parallel', arguments: { tasks } }], usage: { input_tokens: 600, output_tokens: 0 } };
        }
        return { text: 'ok', usage: { input_tokens: 1, output_tokens: 1 } };
      },
      { maxTokensPerSession: 500 },
    );
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    expect(await cadre.store.listRuns({ parent_session_id: session.id })).toEqual([]);
    const messages = await cadre.store.listMessages(session.id);
    const text = JSON.stringify(messages.filter((message) => message.role === 'tool'));
    expect(text.match(/token budget is spent: 600 of 500 tokens used/g)).toHaveLength(1);
  });
});

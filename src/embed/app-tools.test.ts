import { asSchema, generateText, isStepCount, readUIMessageStream, streamText, tool, ToolLoopAgent, toUIMessageStream, type ToolSet } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../agents/agent-definition.ts';
import type { Limits } from '../config/limits.ts';
import { createCadre, type Cadre, type CadreOptions } from '../runtime/create-cadre.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type RespondFunction } from '../testing/index.ts';
import type { CadreRunProgress } from './app-tools.ts';
import { eventually } from '../../test/helpers/eventually.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

function makeCadre(respond: RespondFunction, options: Partial<CadreOptions> & { limits?: Partial<Limits> } = {}) {
  const model = scriptedLanguageModel(respond);
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    model,
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
    ...options,
  });
  open.push(cadre);
  return { cadre, model };
}

const appInstructions = 'You are the app.';
const isSubagent = (system: string) => system.includes('general-purpose');

/** The app's model delegates once in the foreground, then says what came back. */
const delegateOnce: RespondFunction = (request) => {
  if (isSubagent(request.system)) return { text: `Subagent did: ${request.messages[0]!.content}` };
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return { text: `App got: ${last.content}` };
  return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'count the files', description: 'count' } }] };
};

describe('cadre.tools in an app’s own loop', () => {
  it('works in generateText: the run is stored, and the model sees section 3’s output only', async () => {
    const { cadre, model } = makeCadre(delegateOnce);
    const result = await generateText({
      model,
      instructions: appInstructions,
      prompt: 'go',
      tools: cadre.tools({ sessionId: 'chat-1' }),
      stopWhen: isStepCount(3),
    });
    const [run] = await cadre.store.listRuns({ parent_session_id: 'chat-1' });
    expect(run).toMatchObject({ agent: 'general', status: 'completed', mode: 'foreground', description: 'count', depth: 1 });
    expect(result.text).toBe(`App got: run_id: ${run!.id}\nagent: general\nstatus: completed\n\nSubagent did: count the files`);
    // The tool's own output (what useChat shows) is the progress object with the same text in it.
    const output = result.steps[0]!.toolResults[0]!.output as CadreRunProgress;
    expect(output).toMatchObject({ run_id: run!.id, status: 'completed', agent: 'general', output: expect.stringContaining('status: completed') });
    expect(run!.consumed_at).not.toBeNull();
    const session = await cadre.store.getSession('chat-1');
    expect(session).toMatchObject({ agent: '(app)', parent_run_id: null });
  });

  it('offer no fork (cadre does not hold the app’s conversation) and say so', async () => {
    const { cadre } = makeCadre(delegateOnce);
    const agent = cadre.tools({ sessionId: 'chat-1' }).agent!;
    const schema = (await asSchema(agent.inputSchema).jsonSchema) as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(schema.properties)).not.toContain('fork');
    expect(schema.required).toContain('agent');
    expect(agent.description).toContain('fork is not offered here');
  });

  it('streams a foreground run’s progress as preliminary results in streamText, ending with the final one', async () => {
    const { cadre, model } = makeCadre((request) => (isSubagent(request.system) ? { text: 'slow answer', delay_ms: 150 } : delegateOnce(request)));
    const result = streamText({ model, instructions: appInstructions, prompt: 'go', tools: cadre.tools({ sessionId: 'chat-2' }), stopWhen: isStepCount(3) });
    const seen: Array<{ preliminary: boolean; status: string }> = [];
    for await (const part of result.stream) {
      if (part.type === 'tool-result') seen.push({ preliminary: part.preliminary === true, status: (part.output as CadreRunProgress).status });
    }
    expect(seen.at(-1)).toEqual({ preliminary: false, status: 'completed' });
    expect(seen.filter((each) => each.preliminary).map((each) => each.status)).toEqual(expect.arrayContaining(['starting', 'running']));
    expect(await result.text).toMatch(/^App got: run_id: run_.*\nstatus: completed\n\nslow answer$/s);
  });

  it('shows the live tool part in a UI message stream (what useChat renders)', async () => {
    const { cadre, model } = makeCadre((request) => (isSubagent(request.system) ? { text: 'done', delay_ms: 60 } : delegateOnce(request)));
    const result = streamText({ model, instructions: appInstructions, prompt: 'go', tools: cadre.tools({ sessionId: 'chat-ui' }), stopWhen: isStepCount(3) });
    const states: string[] = [];
    for await (const message of readUIMessageStream({ stream: toUIMessageStream({ stream: result.stream }) })) {
      const part = message.parts.find((each) => each.type === 'tool-agent') as { state: string; preliminary?: boolean; output?: CadreRunProgress } | undefined;
      if (part?.output) states.push(`${part.preliminary ? 'preliminary' : 'final'}:${part.output.status}`);
    }
    expect(states.at(-1)).toBe('final:completed');
    expect(states).toContain('preliminary:running');
  });

  it('works in a ToolLoopAgent next to the app’s own tools, and a bad call is a tool error, not a crash', async () => {
    const { cadre, model } = makeCadre((request) => {
      if (isSubagent(request.system)) return { text: 'sub done' };
      const last = request.messages.at(-1)!;
      if (request.turn === 0)
        return {
          tool_calls: [
            { name: 'agent', arguments: { agent: 'nobody', task: 'x' } },
            { name: 'weather', arguments: { city: 'Oslo' } },
          ],
        };
      if (request.turn === 1) return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'y', run_in_background: true } }] };
      return { text: `end: ${last.content}` };
    });
    const weather = tool({ description: 'Weather', inputSchema: z.object({ city: z.string() }), execute: ({ city }) => `sunny in ${city}` });
    // prepareStep fits a loop with typed tools of the app's own: a type check (another chat's, so
    // the background result below stays pending for the assertions).
    const { prepareStep } = cadre.notifications('chat-3-other');
    const agent = new ToolLoopAgent({
      model,
      instructions: appInstructions,
      tools: { weather, ...cadre.tools({ sessionId: 'chat-3' }) },
      prepareStep,
      stopWhen: isStepCount(4),
    });
    const result = await agent.generate({ prompt: 'go' });
    const first = result.steps[0]!.content.filter((part) => part.type === 'tool-result' || part.type === 'tool-error');
    expect(first.map((part) => [part.type, part.toolName])).toEqual([
      ['tool-error', 'agent'],
      ['tool-result', 'weather'],
    ]);
    expect(String((first[0] as { error: unknown }).error)).toContain("Unknown agent 'nobody'. Available agents: general");
    expect(result.text).toMatch(/^end: run_id: run_\S+\nagent: general\nstatus: (queued|running)\nnote: Started in the background/);
    await cadre.waitForIdle('chat-3');
    const [run] = await cadre.store.listRuns({ parent_session_id: 'chat-3' });
    expect(run).toMatchObject({ status: 'completed', mode: 'background' });
    // Its notification waits for the app: cadre does not run a turn of this session.
    expect(run!.notification).toEqual({ delivered_at: null, suppressed: false });
    expect(await cadre.store.listMessages('chat-3')).toEqual([]);
  });

  it('leaves calling cadre’s tools to the user’s toolApproval: a denied call starts no run', async () => {
    const { cadre, model } = makeCadre((request) => (request.turn === 0 ? delegateOnce(request) : { text: 'after denial' }));
    const result = await generateText({
      model,
      instructions: appInstructions,
      prompt: 'go',
      tools: cadre.tools({ sessionId: 'chat-4' }),
      toolApproval: { agent: { type: 'denied', reason: 'no delegation here' } },
      stopWhen: isStepCount(3),
    });
    expect(result.text).toBe('after denial');
    expect(await cadre.store.listRuns({ parent_session_id: 'chat-4' })).toEqual([]);
  });

  it('gives subagents the app’s own tools (createCadre({ tools })), behind cadre’s approvals', async () => {
    let calls = 0;
    const lookup = tool({
      description: 'Looks up an order',
      inputSchema: z.object({ order: z.string() }),
      execute: ({ order }) => (calls++, `order ${order}: shipped`),
    });
    const { cadre, model } = makeCadre(
      (request) => {
        if (request.system.includes('You are the clerk')) {
          const last = request.messages.at(-1)!;
          return last.role === 'tool' ? { text: `clerk: ${last.content}` } : { tool_calls: [{ name: 'lookup', arguments: { order: 'A1' } }] };
        }
        const last = request.messages.at(-1)!;
        if (last.role === 'tool') return { text: last.content.split('\n').at(-1)! };
        return { tool_calls: [{ name: 'agent', arguments: { agent: 'clerk', task: 'check order A1' } }] };
      },
      {
        tools: { lookup },
        agents: [defineAgent({ name: 'clerk', description: 'Checks orders.', system: 'You are the clerk.', tools: ['lookup'], mode: 'subagent' })],
        approvals: 'wait',
      },
    );
    const tools: ToolSet = { lookup, ...cadre.tools({ sessionId: 'chat-5' }) };
    const answering = eventually(async () => (await cadre.pendingApprovals({ sessionId: 'chat-5' }))[0], { timeout: 10_000, what: 'an ask' }).then((ask) =>
      cadre.approve(ask.id, { decision: 'approve' }),
    );
    const result = await generateText({ model, instructions: appInstructions, prompt: 'go', tools, stopWhen: isStepCount(3) });
    const answered = await answering;
    expect(answered.approval).toMatchObject({ tool: 'lookup', status: 'approved', session_id: 'chat-5' });
    expect(result.text).toBe('clerk: order A1: shipped');
    expect(calls).toBe(1);
  });

  it('refuses a session cadre’s own loop drives, and cadre.send refuses an app’s session', async () => {
    const { cadre, model } = makeCadre(delegateOnce);
    const own = await cadre.createSession();
    const tools = cadre.tools({ sessionId: own.id });
    const result = await generateText({ model, instructions: appInstructions, prompt: 'go', tools, stopWhen: isStepCount(2) });
    expect(String(result.steps[0]!.content.find((part) => part.type === 'tool-error')?.error)).toContain("driven by cadre's own loop");
    await cadre.notifications('app-chat').take();
    await expect(cadre.send('app-chat', 'hi')).rejects.toThrow("driven by an app's own loop");
  });

  it('ends a foreground run canceled_by_user when a person stops it from anywhere (cadre stop, a stop button)', async () => {
    const { cadre, model } = makeCadre((request) => (isSubagent(request.system) ? { text: 'never', delay_ms: 5_000 } : delegateOnce(request)));
    const loop = generateText({ model, instructions: appInstructions, prompt: 'go', tools: cadre.tools({ sessionId: 'chat-6' }), stopWhen: isStepCount(3) });
    const run = await firstRun(cadre, 'chat-6');
    await cadre.stopRun(run.id);
    const result = await loop;
    expect((await cadre.store.getRun(run.id))?.status).toBe('canceled_by_user');
    expect(result.text).toMatch(/status: canceled_by_user/);
  });

  it('stops a foreground run with the app’s loop when its abortSignal fires (the page went away)', async () => {
    const { cadre, model } = makeCadre((request) => (isSubagent(request.system) ? { text: 'never', delay_ms: 5_000 } : delegateOnce(request)));
    const controller = new AbortController();
    const loop = generateText({
      model,
      instructions: appInstructions,
      prompt: 'go',
      tools: cadre.tools({ sessionId: 'chat-7' }),
      stopWhen: isStepCount(3),
      abortSignal: controller.signal,
    });
    const run = await firstRun(cadre, 'chat-7');
    controller.abort();
    await loop.catch(() => {});
    await cadre.waitForIdle('chat-7');
    expect((await cadre.store.getRun(run.id))?.status).toBe('canceled_by_user');
  });
});

async function firstRun(cadre: Cadre, sessionId: string) {
  return eventually(async () => (await cadre.store.listRuns({ parent_session_id: sessionId }))[0], { what: 'the first run' });
}

import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../agents/agent-definition.ts';
import type { RunEventRecord, RunRecord } from '../store/records.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Coordination } from '../coordination/coordination.ts';
import { createPollingCoordination } from '../coordination/polling-coordination.ts';
import { defineTool } from '../tools/define-tool.ts';
import { scriptedLanguageModel, type Script } from '../testing/index.ts';
import { createCadre, type Cadre } from './create-cadre.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

function makeCadre(script: Script, limits = {}) {
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    model: scriptedLanguageModel(script),
    limits,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return cadre;
}

describe('createCadre', () => {
  it('delegates a foreground task and returns the subagent result to the parent', async () => {
    const cadre = makeCadre([
      { when: { system_includes: 'general-purpose' }, turns: [{ text: 'The answer is 42.' }] },
      {
        turns: [
          { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Find the answer', description: 'answer' } }] },
          { text: 'Done: the subagent says 42.' },
        ],
      },
    ]);
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'What is the answer?');
    expect(turn).toMatchObject({ status: 'completed', text: 'Done: the subagent says 42.' });
    await cadre.waitForIdle(session.id);
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run).toMatchObject({ status: 'completed', agent: 'general', mode: 'foreground', turns: 1, description: 'answer' });
    expect(run.result?.text).toBe('The answer is 42.');
    expect(run.consumed_at).toBeTypeOf('string');
    const events = (await cadre.store.listRunEvents(run.id)).map((event) => event.type);
    expect(events[0]).toBe('run-queued');
    expect(events).toContain('run-start');
    expect(events).toContain('step-start');
    expect(events.at(-1) === 'run-end' || events.includes('run-end')).toBe(true);
    const messages = await cadre.store.listMessages(session.id);
    const toolMessage = messages.find((message) => message.role === 'tool');
    expect(JSON.stringify(toolMessage?.content)).toContain('status: completed');
    const child = await cadre.store.listMessages(run.child_session_id);
    expect(child[0]).toMatchObject({ role: 'user', content: 'Find the answer' });
    // A finished run holds no lease, so the lease queries of a long-lived process (renewals,
    // stop requests) do not visit every run it ever ran.
    expect(run).toMatchObject({ lease_owner: null, lease_expires_at: null });
    expect(await cadre.store.listRuns({ lease_owner: cadre.ownerId })).toEqual([]);
  });

  it('runs a background task, notifies the parent, and auto-resumes it', async () => {
    const cadre = makeCadre([
      { when: { system_includes: 'general-purpose' }, turns: [{ text: 'Background result.', delay_ms: 30 }] },
      { when: { last_user_includes: '<subagent-notification>' }, turns: [{ text: 'Got the notification.' }] },
      {
        turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Slow work', run_in_background: true } }] }, { text: 'Started it.' }],
      },
    ]);
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'Start slow work');
    expect(turn.text).toBe('Started it.');
    await cadre.waitForIdle(session.id);
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run.status).toBe('completed');
    expect(run.notification?.delivered_at).toBeTypeOf('string');
    const messages = await cadre.store.listMessages(session.id);
    const notifications = messages.filter((message) => typeof message.content === 'string' && message.content.startsWith('<subagent-notification>'));
    expect(notifications).toHaveLength(1);
    expect(JSON.stringify(messages.at(-1)?.content)).toContain('Got the notification.');
  });

  it('returns the runs a session stop ended, even when their host ends them the moment the signal goes out', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const signals = createPollingCoordination({ store });
    // A host on a fast channel (Redis): it has the session's runs canceled before the stopping
    // process goes on from publishing the signal.
    const hosted: string[] = [];
    const coordination: Coordination = {
      publish(signal) {
        if (signal.type === 'session-stop-requested') {
          for (const id of hosted)
            void store.transitionRun({
              id,
              from: ['queued', 'running'],
              to: 'canceled_by_user',
              event: { run_id: id, at: signal.at, type: 'run-end', data: { status: 'canceled_by_user' } },
            });
        }
        signals.publish(signal);
      },
      subscribe: (type, key, listener) => signals.subscribe(type, key, listener),
      close: () => signals.close(),
    };
    const cadre = createCadre({
      store,
      coordination,
      onError: () => {},
      model: scriptedLanguageModel([
        { when: { system_includes: 'general-purpose' }, turns: [{ text: 'Never finished.', delay_ms: 60_000 }] },
        { turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Slow work', run_in_background: true } }] }, { text: 'Started it.' }] },
      ]),
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'Start slow work');
    const [run] = await store.listRuns({ parent_session_id: session.id });
    expect(run.status).toBe('running');
    hosted.push(run.id);
    const stopped = await cadre.stopSession(session.id);
    expect(stopped.map((each) => [each.id, each.status])).toEqual([[run.id, 'canceled_by_user']]);
  });

  it('answers an unknown agent with a tool error and makes no run', async () => {
    const cadre = makeCadre([{ turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'nobody', task: 'x' } }] }, { text: 'ok' }] }]);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    expect(await cadre.store.listRuns({ parent_session_id: session.id })).toHaveLength(0);
    const messages = await cadre.store.listMessages(session.id);
    expect(JSON.stringify(messages)).toContain("Unknown agent 'nobody'. Available agents: general");
  });

  it('streams model text while someone subscribes, and calls the model whole otherwise', async () => {
    const calls = async (subscribed: boolean) => {
      const streamed: boolean[] = [];
      const cadre = createCadre({
        store: createSqliteStore({ path: ':memory:' }),
        onError: (error) => {
          throw error;
        },
        model: scriptedLanguageModel((request) => {
          streamed.push(request.stream);
          if (request.system.includes('general-purpose')) return { text: 'One. Two. Three. Four.', chunk_size: 5 };
          return request.turn === 0 ? { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'count' } }] } : { text: 'done' };
        }),
      });
      open.push(cadre);
      const deltas: string[] = [];
      const session = await cadre.createSession();
      const stop = subscribed
        ? cadre.subscribe((event) => {
            if (event.type === 'text-delta' && event.session_id !== session.id) deltas.push(event.text);
          })
        : () => {};
      await cadre.send(session.id, 'go');
      await cadre.waitForIdle(session.id);
      stop();
      const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
      return { streamed, deltas, run };
    };
    const watched = await calls(true);
    expect(watched.streamed).toEqual([true, true, true]);
    expect(watched.deltas.length).toBeGreaterThan(1);
    expect(watched.deltas.join('')).toBe('One. Two. Three. Four.');
    const unwatched = await calls(false);
    expect(unwatched.streamed).toEqual([false, false, false]);
    expect(unwatched.run.result?.text).toBe('One. Two. Three. Four.');
  });

  it("rejects a turn whose running status cannot be written, and the session's next turn runs with the whole conversation", async () => {
    const store = createSqliteStore({ path: ':memory:' });
    let failing = true;
    // The status write of the first turn fails; everything else reaches the store.
    const flaky = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'updateSession') {
          return (id: string, patch: { status?: string }) => {
            if (failing && patch.status === 'running') {
              failing = false;
              return Promise.reject(new Error('disk full'));
            }
            return target.updateSession(id, patch as never);
          };
        }
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const prompts: string[] = [];
    const cadre = createCadre({
      store: flaky,
      onError: (error) => {
        throw error;
      },
      model: scriptedLanguageModel((request) => {
        prompts.push(JSON.stringify(request.messages));
        return { text: 'hi' };
      }),
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await expect(cadre.send(session.id, 'first')).rejects.toThrow('disk full');
    const turn = await cadre.send(session.id, 'second');
    expect(turn.status).toBe('completed');
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain('first');
    expect(prompts[0]).toContain('second');
    expect((await cadre.store.getSession(session.id))?.status).toBe('idle');
  });

  it('runs at most maxConcurrentTurns primary turns at once; the others wait their turn', async () => {
    let running = 0;
    let most = 0;
    const model = scriptedLanguageModel(async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 20));
      running--;
      return { text: 'hi' };
    });
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      model,
      maxConcurrentTurns: 2,
      onError: (error) => {
        throw error;
      },
    });
    open.push(cadre);
    const sessions = await Promise.all(Array.from({ length: 6 }, () => cadre.createSession()));
    const turns = await Promise.all(sessions.map((session) => cadre.send(session.id, 'hello')));
    expect(turns.map((turn) => turn.status)).toEqual(Array(6).fill('completed'));
    expect(most).toBe(2);
  });

  it('announces live events with their stored seq and the run as it stands (turns, usage)', async () => {
    const noop = defineTool({ name: 'noop', description: 'Does nothing.', inputSchema: z.object({}), execute: () => 'ok' });
    const worker = defineAgent({ name: 'worker', description: 'Works.', system: 'WORKER', tools: ['noop'], mode: 'subagent' });
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      agents: [worker],
      tools: { noop },
      onError: (error) => {
        throw error;
      },
      model: scriptedLanguageModel((request) => {
        if (request.system.includes('WORKER')) {
          return request.turn < 2
            ? { tool_calls: [{ name: 'noop', arguments: {} }], usage: { input_tokens: 10, output_tokens: 5 } }
            : { text: 'Done.', usage: { input_tokens: 10, output_tokens: 5 } };
        }
        return request.turn === 0 ? { tool_calls: [{ name: 'agent', arguments: { agent: 'worker', task: 'work' } }] } : { text: 'ok' };
      }),
    });
    open.push(cadre);
    const seen: Array<{ run: RunRecord; event: RunEventRecord }> = [];
    cadre.subscribe((event) => {
      if (event.type === 'run-event' && event.event.type !== 'activity') seen.push({ run: event.run, event: event.event as RunEventRecord });
    });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    // Activity is announced as it happens and stored throttled, so it is compared apart.
    const stored = (await cadre.store.listRunEvents(run.id)).filter((event) => event.type !== 'activity');
    const live = seen.filter((entry) => entry.event.run_id === run.id);
    expect(live.map((entry) => [entry.event.seq, entry.event.type])).toEqual(stored.map((event) => [event.seq, event.type]));
    const thirdStep = live.filter((entry) => entry.event.type === 'step-start')[2];
    expect(thirdStep.run.turns).toBe(2);
    expect(thirdStep.run.usage).toEqual({ input_tokens: 20, output_tokens: 10 });
  });

  it("stores a step's rows in one call per kind, its events and activity in the order they happened", async () => {
    const noop = defineTool({ name: 'noop', description: 'Does nothing.', inputSchema: z.object({ path: z.string() }), execute: () => 'ok' });
    const worker = defineAgent({ name: 'worker', description: 'Works.', system: 'WORKER', tools: ['noop'], mode: 'subagent' });
    const store = createSqliteStore({ path: ':memory:' });
    const calls: string[] = [];
    for (const method of ['appendMessages', 'appendRunEvents', 'patchRun', 'updateRun'] as const) {
      const original = (store[method] as (...args: unknown[]) => Promise<unknown>).bind(store);
      (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        calls.push(method);
        return original(...args);
      };
    }
    const cadre = createCadre({
      store,
      agents: [worker],
      tools: { noop },
      onError: (error) => {
        throw error;
      },
      model: scriptedLanguageModel((request) => {
        if (request.system.includes('WORKER'))
          return request.turn < 3 ? { tool_calls: [{ name: 'noop', arguments: { path: `file-${request.turn}` } }] } : { text: 'Done.' };
        return request.turn === 0 ? { tool_calls: [{ name: 'agent', arguments: { agent: 'worker', task: 'work' } }] } : { text: 'ok' };
      }),
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    const events = await cadre.store.listRunEvents(run.id);
    // Each step's rows (step-start, the tool call's start and end, its activity, its messages and
    // counters) went to the store together: one call for its messages and one for the rest.
    expect(calls.filter((call) => call === 'appendRunEvents' || call === 'patchRun').length).toBeLessThanOrEqual(run.turns + 1);
    expect(events.filter((event) => event.type === 'step-start')).toHaveLength(4);
    const types = events.map((event) => event.type);
    // The first activity the loop set ("waiting for model") follows the step it belongs to.
    expect(types.indexOf('activity')).toBeGreaterThan(types.indexOf('step-start'));
    expect(types.indexOf('tool-call-start')).toBeGreaterThan(types.indexOf('step-start'));
    expect(types.at(-1)).toBe('result-consume');
    const times = events.map((event) => event.at);
    expect(times).toEqual([...times].sort());
    expect(run.turns).toBe(4);
  });

  it('fails a run whose step could not be stored, though the loop did not wait for the commit', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    let childSession = '';
    const appendMessages = store.appendMessages.bind(store);
    // The subagent's first step (its tool call) cannot be stored; its task message can.
    store.appendMessages = async (messages) => {
      if (messages[0]?.role === 'user' && messages[0].content === 'Work') childSession = messages[0].session_id;
      if (childSession !== '' && messages[0]?.session_id === childSession && messages[0].role === 'assistant') throw new Error('disk full');
      return appendMessages(messages);
    };
    const echo = defineTool({ name: 'echo', description: 'Echoes.', inputSchema: z.object({}), execute: () => 'echoed' });
    const cadre = createCadre({
      store,
      model: scriptedLanguageModel([
        { when: { system_includes: 'general-purpose' }, turns: [{ tool_calls: [{ name: 'echo', arguments: {} }] }, { text: 'Finished.' }] },
        { turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Work' } }] }, { text: 'ok' }] },
      ]),
      tools: { echo },
      agents: [defineAgent({ name: 'general', description: 'General-purpose.', system: 'You are general-purpose.', tools: ['echo'] })],
      onError: () => {},
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'Go');
    await cadre.waitForIdle(session.id);
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run).toMatchObject({ status: 'failed', error: { kind: 'execution_error' } });
    expect(run.error?.message).toContain('could not be stored: disk full');
  });
});

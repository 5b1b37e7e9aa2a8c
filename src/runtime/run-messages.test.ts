import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../agents/agent-definition.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { RunRecord } from '../store/records.ts';
import { eventFixture, runFixture, sessionFixture } from '../store/store-fixtures.ts';
import { scriptedLanguageModel, type ScriptedRequest, type ScriptedTurn } from '../testing/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { createCadre, type Cadre } from './create-cadre.ts';
import { toolOutputs } from './runtime-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

/** A promise with its resolve, for events the test waits on (no sleeps). */
function signal<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

const worker = defineAgent({ name: 'worker', description: 'Works on tasks', system: 'Worker agent.', tools: ['slow'] });

/** A tool that waits until its call is aborted (or 30 s), telling when it started. */
function slowTool(started: () => void) {
  return defineTool({
    name: 'slow',
    description: 'Takes long',
    risk: 'read',
    inputSchema: z.object({}),
    execute: async (_input, { abortSignal }) => {
      started();
      await sleep(30_000, undefined, { signal: abortSignal });
      return 'slow done';
    },
  });
}

interface Harness {
  cadre: Cadre;
  /** Requests of the subagent, in order. */
  requests: ScriptedRequest[];
}

/**
 * A runtime whose primary agent starts one background run of `worker` and whose subagent answers
 * with `subagent` (given each request and how many came before).
 */
function makeCadre(subagent: (request: ScriptedRequest, index: number) => ScriptedTurn | Promise<ScriptedTurn>, slowStarted: () => void = () => {}): Harness {
  const requests: ScriptedRequest[] = [];
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    model: scriptedLanguageModel((request) => {
      if (request.system.includes('Worker agent')) {
        requests.push(request);
        return subagent(request, requests.length - 1);
      }
      const last = request.messages.at(-1);
      if (last?.role === 'user' && last.content.includes('<subagent-notification>')) return { text: 'noted' };
      if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'worker', task: 'Count the files', run_in_background: true } }] };
      return { text: 'started' };
    }),
    agents: [worker],
    tools: { slow: slowTool(slowStarted) },
    approvals: 'yes',
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return { cadre, requests };
}

async function startRun(cadre: Cadre): Promise<{ sessionId: string; run: RunRecord }> {
  const session = await cadre.createSession();
  await cadre.send(session.id, 'go');
  const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
  return { sessionId: session.id, run };
}

const userTexts = (request: ScriptedRequest) => request.messages.filter((message) => message.role === 'user').map((message) => message.content);

describe('messages to a run that already started', () => {
  it('gives messages to a running run before its next model call, in order and once each, and a run about to end takes them and goes on', async () => {
    const calledOnce = signal();
    const gate = signal();
    const { cadre, requests } = makeCadre(async (_request, index) => {
      if (index === 0) {
        calledOnce.resolve();
        await gate.promise;
        return { text: 'first answer' };
      }
      return { text: 'went on with the messages' };
    });
    const { sessionId, run } = await startRun(cadre);
    await calledOnce.promise;
    const first = await cadre.sendToRun(run.id, 'Also count the tests.');
    const second = await cadre.sendToRun(run.id, 'And the docs.');
    expect(first).toMatchObject({ kind: 'running', reachable: true, message: { from: 'person', delivered_at: null } });
    expect(second.kind).toBe('running');
    // Stored before it was acknowledged.
    expect((await cadre.store.getRun(run.id))?.messages?.map((message) => message.text)).toEqual(['Also count the tests.', 'And the docs.']);
    gate.resolve();
    await cadre.waitForIdle(sessionId);
    const ended = await cadre.store.getRun(run.id);
    expect(ended?.status).toBe('completed');
    expect(ended?.result?.text).toBe('went on with the messages');
    expect(ended?.messages?.every((message) => message.delivered_at !== null && message.delivered_to === 'transcript')).toBe(true);
    expect(requests).toHaveLength(2);
    expect(userTexts(requests[1])).toEqual(['Count the files', '(from a person) Also count the tests.', '(from a person) And the docs.']);
    const transcript = await cadre.store.listMessages(run.child_session_id);
    expect(transcript.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'user', 'assistant']);
    const events = (await cadre.store.listRunEvents(run.id)).map((event) => event.type);
    expect(events.filter((type) => type === 'message-in')).toHaveLength(2);
    expect(events.filter((type) => type === 'message-deliver')).toHaveLength(2);
    expect(events.filter((type) => type === 'run-end')).toHaveLength(1);
  });

  it('aborts a slow model call for an interrupting message; the run stays running with its id and the call is not sent again without the message', async () => {
    const calledOnce = signal();
    const { cadre, requests } = makeCadre((_request, index) => {
      if (index === 0) {
        calledOnce.resolve();
        return { fault: { type: 'hang' } };
      }
      return { text: 'redirected' };
    });
    const { sessionId, run } = await startRun(cadre);
    await calledOnce.promise;
    const sent = await cadre.sendToRun(run.id, 'Stop that; count only src.', { interrupt: true });
    expect(sent.kind).toBe('running');
    await cadre.waitForIdle(sessionId);
    const ended = await cadre.store.getRun(run.id);
    expect(ended).toMatchObject({ id: run.id, status: 'completed', result: { text: 'redirected' } });
    expect(requests).toHaveLength(2);
    expect(userTexts(requests[1])).toEqual(['Count the files', '(from a person) Stop that; count only src.']);
    const statuses = (await cadre.store.listRunEvents(run.id)).filter((event) => event.type === 'run-end');
    expect(statuses).toHaveLength(1);
  });

  it('aborts a slow tool call for an interrupting message; its result says it was interrupted', async () => {
    const slowStarted = signal();
    const { cadre, requests } = makeCadre((request, index) => {
      if (index === 0) return { tool_calls: [{ name: 'slow', arguments: {} }] };
      return { text: `after: ${request.messages.at(-1)?.content}` };
    }, slowStarted.resolve);
    const { sessionId, run } = await startRun(cadre);
    await slowStarted.promise;
    const started = Date.now();
    await cadre.sendToRun(run.id, 'Never mind the slow tool.', { interrupt: true });
    await cadre.waitForIdle(sessionId);
    expect(Date.now() - started).toBeLessThan(10_000);
    const transcript = await cadre.store.listMessages(run.child_session_id);
    expect(toolOutputs(transcript, 'slow')[0]).toMatch(/interrupted/i);
    expect(requests[1].messages.at(-1)).toMatchObject({ role: 'user', content: '(from a person) Never mind the slow tool.' });
    expect((await cadre.store.getRun(run.id))?.status).toBe('completed');
  });

  it('adds a message to a queued run’s task under its heading', async () => {
    const requests: ScriptedRequest[] = [];
    // One slot for the session: the second run waits in the queue.
    const limited = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      model: scriptedLanguageModel((request) => {
        if (request.system.includes('Worker agent')) {
          requests.push(request);
          return userTexts(request)[0].startsWith('First') ? { fault: { type: 'hang' } } : { text: 'second done' };
        }
        if (request.messages.at(-1)?.content.includes('<subagent-notification>')) return { text: 'noted' };
        if (request.turn === 0)
          return {
            tool_calls: [
              { name: 'agent', arguments: { agent: 'worker', task: 'First task', run_in_background: true } },
              { name: 'agent', arguments: { agent: 'worker', task: 'Second task', run_in_background: true } },
            ],
          };
        return { text: 'started' };
      }),
      agents: [worker],
      tools: {},
      limits: { maxActivePerParent: 1 },
      maxRetries: 0,
    });
    open.push(limited);
    const session = await limited.createSession();
    await limited.send(session.id, 'go');
    const runs = await limited.store.listRuns({ parent_session_id: session.id, order: 'oldest' });
    const queued = runs.find((each) => each.task === 'Second task')!;
    expect(queued.status).toBe('queued');
    const sent = await limited.sendToRun(queued.id, 'Use the short format.');
    expect(sent.kind).toBe('queued');
    expect((await limited.store.getRun(queued.id))?.task).toBe('Second task\n\n## Message from a person\n\nUse the short format.');
    const first = runs.find((each) => each.task === 'First task')!;
    await limited.stopRun(first.id);
    await limited.waitForIdle(session.id);
    const second = requests.find((request) => userTexts(request)[0].startsWith('Second'))!;
    expect(userTexts(second)).toEqual(['Second task\n\n## Message from a person\n\nUse the short format.']);
  });

  it('starts a follow-up on the child session of a finished run, and a second message goes to that follow-up, never a second active run', async () => {
    const followGate = signal();
    const followStarted = signal();
    const { cadre, requests } = makeCadre(async (request, index) => {
      if (index === 0) return { text: 'counted 12 files' };
      if (index === 1) {
        followStarted.resolve();
        await followGate.promise;
        return { text: 'follow-up answer' };
      }
      return { text: `last: ${request.messages.at(-1)?.content}` };
    });
    const { sessionId, run } = await startRun(cadre);
    await cadre.waitForIdle(sessionId);
    expect((await cadre.store.getRun(run.id))?.status).toBe('completed');
    const sent = await cadre.sendToRun(run.id, 'Now count the tests.');
    expect(sent.kind).toBe('follow-up');
    const followUp = sent.run;
    expect(followUp).toMatchObject({ child_session_id: run.child_session_id, resumed_from: run.id, agent: 'worker' });
    await followStarted.promise;
    const again = await cadre.sendToRun(run.id, 'And the docs.');
    expect(again).toMatchObject({ kind: 'running', run: { id: followUp.id } });
    followGate.resolve();
    await cadre.waitForIdle(sessionId);
    const runs = await cadre.store.listRuns({ parent_session_id: sessionId });
    expect(runs).toHaveLength(2);
    expect(userTexts(requests[1])).toEqual(['Count the files', '(from a person) Now count the tests.']);
    expect(userTexts(requests[2]).slice(-1)).toEqual(['(from a person) And the docs.']);
  });

  it('lets the parent model steer its background run with agent_send, and shows the message in agent_list and in the transcript where it arrived', async () => {
    const sentByParent = signal();
    const subagentRequests: ScriptedRequest[] = [];
    const parentRequests: ScriptedRequest[] = [];
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      model: scriptedLanguageModel(async (request) => {
        if (request.system.includes('Worker agent')) {
          subagentRequests.push(request);
          if (subagentRequests.length === 1) await sentByParent.promise;
          return { text: subagentRequests.length === 1 ? 'first answer' : `focused: ${request.messages.at(-1)?.content}` };
        }
        parentRequests.push(request);
        const last = request.messages.at(-1)!;
        const runId = /run_id: (run_\w+)/.exec(request.messages.map((message) => message.content).join('\n'))?.[1];
        if (last.role === 'user' && last.content.includes('<subagent-notification>'))
          return { tool_calls: [{ name: 'agent_output', arguments: { run_id: runId, detail: 'transcript' } }] };
        if (last.role === 'user') return { tool_calls: [{ name: 'agent', arguments: { agent: 'worker', task: 'Count the files', run_in_background: true } }] };
        const previous = request.messages.at(-2)?.tool_calls?.[0]?.name;
        if (previous === 'agent') return { tool_calls: [{ name: 'agent_send', arguments: { run_id: runId, message: 'Focus on src.' } }] };
        if (previous === 'agent_send') return { tool_calls: [{ name: 'agent_list', arguments: { status: 'all' } }] };
        if (previous === 'agent_list') {
          sentByParent.resolve();
          return { text: 'steered' };
        }
        return { text: 'read it' };
      }),
      agents: [worker],
      tools: {},
      maxRetries: 0,
    });
    open.push(cadre);
    const { sessionId, run } = await startRun(cadre);
    await cadre.waitForIdle(sessionId);
    const ended = await cadre.store.getRun(run.id);
    expect(ended).toMatchObject({ status: 'completed', result: { text: 'focused: Focus on src.' } });
    expect(userTexts(subagentRequests[1])).toEqual(['Count the files', 'Focus on src.']);
    const parentMessages = await cadre.store.listMessages(sessionId);
    expect(toolOutputs(parentMessages, 'agent_send')[0]).toMatch(
      /^run_id: run_\w+\nagent: worker\nstatus: running\nnote: Your message reaches it before its next model call\./,
    );
    expect(toolOutputs(parentMessages, 'agent_list')[0]).toContain('| messages: 0 delivered, 1 pending');
    expect(toolOutputs(parentMessages, 'agent_output')[0]).toContain('[user: message from the parent]\nFocus on src.');
    expect(ended?.messages?.[0]).toMatchObject({ from: 'parent', delivered_to: 'transcript' });
  });

  it('keeps a message for a run whose process is gone, says so, and delivers it once when the run resumes in another process', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const requests: ScriptedRequest[] = [];
    const cadre = createCadre({
      store,
      model: scriptedLanguageModel((request) => {
        requests.push(request);
        return { text: `resumed with: ${request.messages.at(-1)?.content}` };
      }),
      agents: [worker],
      tools: {},
      maxRetries: 0,
    });
    open.push(cadre);
    // A run its dead process left running: its lease names a pid no process has, and has run out.
    const dead = `${hostname()}:999999999:gone`;
    // Sessions with the model label this runtime gives its injected model.
    const { model } = await cadre.createSession();
    await store.createSession(sessionFixture({ id: 'ses_1', model }));
    await store.createSession(sessionFixture({ id: 'ses_child_run_1', agent: 'worker', parent_run_id: 'run_1', model }));
    await store.appendMessages([{ session_id: 'ses_child_run_1', role: 'user', content: 'Count the files', created_at: '2025-01-01T00:00:01.000Z' }]);
    await store.insertRun(
      runFixture({
        agent: 'worker',
        task: 'Count the files',
        status: 'running',
        mode: 'background',
        lease_owner: dead,
        lease_expires_at: '2025-01-01T00:00:20.000Z',
      }),
      eventFixture('run_1', 'run-queued', { mode: 'background' }),
    );
    const sent = await cadre.sendToRun('run_1', 'Only count src.');
    expect(sent).toMatchObject({ kind: 'running', reachable: false });
    expect((await store.getRun('run_1'))?.messages?.[0]?.delivered_at).toBeNull();
    await cadre.recover({ sessionId: 'ses_1' });
    await cadre.waitForIdle('ses_1');
    const ended = await store.getRun('run_1');
    expect(ended?.error).toBeNull();
    expect(ended).toMatchObject({ status: 'completed', result: { text: 'resumed with: (from a person) Only count src.' } });
    const subagent = requests.filter((request) => request.system.includes('Worker agent'));
    expect(subagent).toHaveLength(1);
    expect(userTexts(subagent[0])).toEqual(['Count the files', '(from a person) Only count src.']);
    expect((await store.listRunEvents('run_1')).filter((event) => event.type === 'message-deliver')).toHaveLength(1);
  });

  it('refuses an empty message, another session’s run and an unknown run, changing nothing', async () => {
    const { cadre } = makeCadre(() => ({ text: 'done' }));
    const { sessionId, run } = await startRun(cadre);
    await cadre.waitForIdle(sessionId);
    await expect(cadre.sendToRun(run.id, '   ')).rejects.toThrow('message: must not be empty');
    await expect(cadre.sendToRun('run_unknown', 'hello')).rejects.toThrow("No run 'run_unknown'.");
    const tools = cadre.tools({ sessionId: 'ses_other' });
    const output = await (tools.agent_send as { execute: (input: unknown, options: unknown) => Promise<unknown> })
      .execute({ run_id: run.id, message: 'hello' }, { toolCallId: 'call_x', messages: [] })
      .catch((error: Error) => error.message);
    expect(String(output)).toContain(`No subagent run '${run.id}' in this session.`);
    expect(await cadre.store.listRuns({ parent_session_id: sessionId })).toHaveLength(1);
    expect((await cadre.store.getRun(run.id))?.messages).toBeUndefined();
  });
});

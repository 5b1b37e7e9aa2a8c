import { afterEach, describe, expect, it } from 'vitest';
import type { Limits } from '../config/limits.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type Script } from '../testing/index.ts';
import { createCadre, type Cadre } from './create-cadre.ts';
import { toolOutputs } from './runtime-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

function makeCadre(script: Script, limits: Partial<Limits> = {}) {
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    model: scriptedLanguageModel(script),
    limits,
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return cadre;
}

const subagent = { when: { system_includes: 'general-purpose' } };

describe('delegation tools', () => {
  it('lists runs, reads one with wait, and marks it read', async () => {
    const cadre = makeCadre([
      { ...subagent, turns: [{ text: 'slow answer', delay_ms: 80 }] },
      { when: { last_user_includes: '<subagent-notification>' }, turns: [{ text: 'noted' }] },
      {
        turns: [
          { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Slow job', description: 'slow job', run_in_background: true } }] },
          { tool_calls: [{ name: 'agent_list', arguments: {} }] },
          { tool_calls: [{ name: 'agent_output', arguments: { run_id: 'PLACEHOLDER' } }] },
          { text: 'all read' },
        ],
      },
    ]);
    // The run id is only known at run time, so answer agent_output through a lookup.
    const session = await cadre.createSession();
    const turn = cadre.send(session.id, 'go');
    await turn;
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    const messages = await cadre.store.listMessages(session.id);
    const [listing] = toolOutputs(messages, 'agent_list');
    expect(listing).toMatch(new RegExp(`^${run.id} \\| (queued|running) \\| general \\| slow job \\| \\d+s \\| latest: `));
    expect(toolOutputs(messages, 'agent_output')[0]).toBe("No subagent run 'PLACEHOLDER' in this session.");
    await cadre.waitForIdle(session.id);
    const finished = await cadre.store.getRun(run.id);
    expect(finished?.status).toBe('completed');
    expect(finished?.notification?.delivered_at).toBeTypeOf('string');
  });

  it('waits for a run with agent_output and returns the pinned shape', async () => {
    let runId = '';
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      maxRetries: 0,
      onError: (error) => {
        throw error;
      },
      model: scriptedLanguageModel((request) => {
        if (request.system.includes('general-purpose')) return { text: 'Result text here.', delay_ms: 50 };
        const last = request.messages.at(-1);
        if (last?.role === 'user' && last.content.includes('<subagent-notification>')) return { text: 'ok' };
        if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'job', run_in_background: true } }] };
        if (request.turn === 1) {
          runId = /run_id: (run_\w+)/.exec(String(request.messages.at(-1)?.content))?.[1] ?? '';
          return { tool_calls: [{ name: 'agent_output', arguments: { run_id: runId, wait: true, timeout_seconds: 5 } }] };
        }
        return { text: 'done' };
      }),
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const [output] = toolOutputs(await cadre.store.listMessages(session.id), 'agent_output');
    expect(output).toBe(`run_id: ${runId}\nagent: general\nstatus: completed\n\nResult text here.`);
    const run = await cadre.store.getRun(runId);
    expect(run?.consumed_at).not.toBeNull();
    // Read before it finished notifying? Either way, exactly one of: delivered, or suppressed because read.
    const events = (await cadre.store.listRunEvents(runId)).map((event) => event.type);
    expect(events.filter((type) => type === 'result-consume')).toHaveLength(1);
  });

  it('stops a running run with agent_stop: canceled_by_parent, partial result kept, no notification', async () => {
    let runId = '';
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      // The partial result is the text streamed so far.
      streaming: 'always',
      maxRetries: 0,
      onError: (error) => {
        throw error;
      },
      model: scriptedLanguageModel((request) => {
        if (request.system.includes('general-purpose')) return { text: 'Working on it. Still going and going.', chunk_size: 5, chunk_delay_ms: 100 };
        if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'long job', run_in_background: true } }] };
        if (request.turn === 1) {
          runId = /run_id: (run_\w+)/.exec(String(request.messages.at(-1)?.content))?.[1] ?? '';
          return { tool_calls: [{ name: 'agent_stop', arguments: { run_id: runId, reason: 'not needed' } }], delay_ms: 350 };
        }
        return { text: 'stopped it' };
      }),
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const run = await cadre.store.getRun(runId);
    expect(run?.status).toBe('canceled_by_parent');
    expect(run?.partial_result).toMatch(/^Working/);
    expect(run?.notification?.suppressed).toBe(true);
    const [output] = toolOutputs(await cadre.store.listMessages(session.id), 'agent_stop');
    expect(output).toContain('status: canceled_by_parent');
    expect(output).toContain('Partial result');
  });

  it('stops a run whose model call is not streamed: the call is aborted and the body is never empty', async () => {
    let runId = '';
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      streaming: 'never',
      maxRetries: 0,
      onError: (error) => {
        throw error;
      },
      model: scriptedLanguageModel((request) => {
        if (request.system.includes('general-purpose')) {
          return { text: 'never seen', delay_ms: 5_000 };
        }
        if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'long job', run_in_background: true } }] };
        if (request.turn === 1) {
          runId = /run_id: (run_\w+)/.exec(String(request.messages.at(-1)?.content))?.[1] ?? '';
          return { tool_calls: [{ name: 'agent_stop', arguments: { run_id: runId } }], delay_ms: 100 };
        }
        return { text: 'stopped it' };
      }),
    });
    open.push(cadre);
    const session = await cadre.createSession();
    const started = Date.now();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    // The 5 s model call was aborted: cadre waits for its local runs' loops to settle.
    expect(Date.now() - started).toBeLessThan(3_000);
    const run = await cadre.store.getRun(runId);
    expect(run?.status).toBe('canceled_by_parent');
    const [output] = toolOutputs(await cadre.store.listMessages(session.id), 'agent_stop');
    expect(output).toContain('status: canceled_by_parent');
    expect(output.trim().split('\n').length).toBeGreaterThan(2);
  });

  it('promotes a slow foreground run to the background and notifies on completion', async () => {
    const cadre = makeCadre(
      [
        { ...subagent, turns: [{ text: 'finally done', delay_ms: 300 }] },
        { when: { last_user_includes: '<subagent-notification>' }, turns: [{ text: 'saw the notification' }] },
        { turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'slow' } }] }, { text: 'carrying on' }] },
      ],
      { foregroundWarningMs: 100 },
    );
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'go');
    expect(turn.text).toBe('carrying on');
    const messages = await cadre.store.listMessages(session.id);
    const [output] = toolOutputs(messages, 'agent');
    expect(output).toMatch(/status: running\nnote: This run has been going for over/);
    await cadre.waitForIdle(session.id);
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run).toMatchObject({ status: 'completed', mode: 'background' });
    expect(run.promoted_at).not.toBeNull();
    expect(run.warnings.map((warning) => warning.kind)).toEqual(['long_running']);
    expect(run.notification?.delivered_at).toBeTypeOf('string');
    const all = await cadre.store.listMessages(session.id);
    expect(JSON.stringify(all.at(-1)?.content)).toContain('saw the notification');
  });

  it('queues runs past the per-parent cap and refuses past the queue cap', async () => {
    const cadre = makeCadre(
      [
        { ...subagent, turns: [{ text: 'ok', delay_ms: 150 }] },
        { when: { last_user_includes: '<subagent-notification>' }, turns: [{ text: 'ok' }] },
        {
          turns: [
            { tool_calls: [0, 1, 2, 3].map((index) => ({ name: 'agent', arguments: { agent: 'general', task: `job ${index}`, run_in_background: true } })) },
            { text: 'started' },
          ],
        },
      ],
      { maxActivePerParent: 1, maxQueuedPerParent: 2 },
    );
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const outputs = toolOutputs(await cadre.store.listMessages(session.id), 'agent');
    expect(outputs.map((output) => /status: (\w+)/.exec(output)?.[1])).toEqual(['running', 'queued', 'queued', 'failed']);
    expect(outputs[3]).toContain('error: too_many_active:');
    await cadre.waitForIdle(session.id);
    const runs = await cadre.store.listRuns({ parent_session_id: session.id, order: 'oldest' });
    expect(runs.map((run) => run.status)).toEqual(['completed', 'completed', 'completed', 'failed']);
    // FIFO: queued runs started in the order they were made.
    const started = runs.slice(0, 3).map((run) => run.started_at!);
    expect([...started].sort()).toEqual(started);
  });

  it('resumes a finished run in its child session, and refuses a bad resume', async () => {
    let firstRunId = '';
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      maxRetries: 0,
      onError: (error) => {
        throw error;
      },
      model: scriptedLanguageModel((request) => {
        if (request.system.includes('general-purpose')) return { text: `answer to: ${String(request.messages.at(-1)?.content)}` };
        if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'first' } }] };
        if (request.turn === 1) {
          firstRunId = /run_id: (run_\w+)/.exec(String(request.messages.at(-1)?.content))?.[1] ?? '';
          return {
            tool_calls: [
              { name: 'agent', arguments: { agent: 'general', task: 'second', resume: firstRunId } },
              { name: 'agent', arguments: { agent: 'general', task: 'x', resume: 'run_nope' } },
            ],
          };
        }
        return { text: 'done' };
      }),
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const runs = await cadre.store.listRuns({ parent_session_id: session.id, order: 'oldest' });
    expect(runs).toHaveLength(2);
    expect(runs[1]).toMatchObject({ resumed_from: firstRunId, child_session_id: runs[0].child_session_id, status: 'completed' });
    const child = await cadre.store.listMessages(runs[0].child_session_id);
    expect(child.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const outputs = toolOutputs(await cadre.store.listMessages(session.id), 'agent');
    expect(outputs.some((output) => output.includes("resume: No subagent run 'run_nope' in this session."))).toBe(true);
  });

  it('tells the model what to fix when parameters are bad', async () => {
    const cadre = makeCadre([
      {
        turns: [
          {
            tool_calls: [
              { name: 'agent', arguments: { agent: 'general', task: '', max_turns: 0 } },
              { name: 'agent_list', arguments: { status: 'weird' } },
            ],
          },
          { text: 'ok' },
        ],
      },
    ]);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const text = JSON.stringify(await cadre.store.listMessages(session.id));
    expect(text).toContain("Invalid input for tool 'agent': task:");
    expect(text).toContain('max_turns: must be at least 1');
    expect(text).toContain("Invalid input for tool 'agent_list': status: must be active, all, or one of");
    expect(await cadre.store.listRuns({ parent_session_id: session.id })).toHaveLength(0);
  });
});

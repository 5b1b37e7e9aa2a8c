import { generateText, isStepCount, type ModelMessage } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { createCadre, type Cadre } from '../runtime/create-cadre.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';
import { scriptedLanguageModel, type RespondFunction } from '../testing/index.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

function makeCadre(respond: RespondFunction, store: Store = createSqliteStore({ path: ':memory:' })) {
  const model = scriptedLanguageModel(respond);
  const cadre = createCadre({
    store,
    model,
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return { cadre, model };
}

const isSubagent = (system: string) => system.includes('general-purpose');

/** Turn 0 starts a background run; later turns answer with what the last message said. */
const backgroundThenEcho =
  (subagentDelayMs = 0): RespondFunction =>
  (request) => {
    if (isSubagent(request.system)) return { text: `found: ${request.messages[0]!.content}`, delay_ms: subagentDelayMs };
    if (request.turn === 0)
      return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'look around', description: 'look', run_in_background: true } }] };
    const last = request.messages.at(-1)!;
    return { text: `saw ${last.role}: ${last.content.slice(0, 40)}` };
  };

async function startBackground(cadre: Cadre, model: ReturnType<typeof scriptedLanguageModel>, sessionId: string) {
  await generateText({ model, instructions: 'You are the app.', prompt: 'go', tools: cadre.tools({ sessionId }), stopWhen: isStepCount(2) });
  await cadre.waitForIdle(sessionId);
  const [run] = await cadre.store.listRuns({ parent_session_id: sessionId });
  return run!;
}

const text = (messages: ModelMessage[]) => messages.map((message) => `${message.role}: ${String(message.content)}`);

describe('cadre.notifications', () => {
  it('takes a finished background run as one section 6 message, once per object, again until ack, then never', async () => {
    const { cadre, model } = makeCadre(backgroundThenEcho());
    const run = await startBackground(cadre, model, 'chat');
    const first = cadre.notifications('chat');
    const taken = await first.take();
    expect(text(taken)).toEqual([
      expect.stringMatching(
        new RegExp(`^user: <subagent-notification>\nrun_id: ${run.id}\nagent: general\nstatus: completed\ndescription: look\nsummary: found: look around`),
      ),
    ]);
    expect(await first.take()).toEqual([]);
    // Not acknowledged: another object (the next request, a restarted process) gets it again.
    expect(await cadre.notifications('chat').take()).toEqual(taken);
    expect((await cadre.store.getRun(run.id))?.notification?.delivered_at).toBeNull();

    await first.ack();
    expect((await cadre.store.getRun(run.id))?.notification?.delivered_at).toBeTypeOf('string');
    expect(await cadre.notifications('chat').take()).toEqual([]);
    // cadre's copy of the session holds what the app was given, once.
    expect((await cadre.store.listMessages('chat')).map((message) => [message.role, message.content])).toEqual([['user', taken[0]!.content]]);
    const events = await cadre.store.listRunEvents(run.id);
    expect(events.filter((event) => event.type === 'notification-deliver')).toHaveLength(1);
  });

  it('sends nothing for a run whose result the app’s model already read with agent_output', async () => {
    const { cadre, model } = makeCadre(backgroundThenEcho());
    const run = await startBackground(cadre, model, 'chat-read');
    const notes = cadre.notifications('chat-read');
    await generateText({
      model: scriptedLanguageModel((request) =>
        request.turn === 0 ? { tool_calls: [{ name: 'agent_output', arguments: { run_id: run.id } }] } : { text: 'read' },
      ),
      prompt: 'read it',
      tools: cadre.tools({ sessionId: 'chat-read' }),
      stopWhen: isStepCount(2),
    });
    expect(await notes.take()).toEqual([]);
  });

  it('adds a notification mid-loop through prepareStep: the background result reaches the model before its next step', async () => {
    let sawNotification = false;
    const { cadre, model } = makeCadre((request) => {
      if (isSubagent(request.system)) return { text: 'background result' };
      const last = request.messages.at(-1)!;
      if (last.role === 'user' && last.content.startsWith('<subagent-notification>')) {
        sawNotification = true;
        return { text: 'thanks for the notification' };
      }
      if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'bg', run_in_background: true } }] };
      // Keep the loop busy until the run has finished and its notification is taken.
      return { tool_calls: [{ name: 'agent_list', arguments: {} }], delay_ms: 30 };
    });
    const notes = cadre.notifications('chat-mid');
    const result = await generateText({
      model,
      instructions: 'You are the app.',
      prompt: 'go',
      tools: cadre.tools({ sessionId: 'chat-mid' }),
      prepareStep: notes.prepareStep,
      stopWhen: isStepCount(10),
    });
    expect(sawNotification).toBe(true);
    expect(result.text).toBe('thanks for the notification');
    await notes.ack();
    const [run] = await cadre.store.listRuns({ parent_session_id: 'chat-mid' });
    expect(run?.notification?.delivered_at).toBeTypeOf('string');
  });

  it('wait() resolves when a notification arrives and rejects when its signal aborts', async () => {
    const { cadre, model } = makeCadre(backgroundThenEcho(100));
    const notes = cadre.notifications('chat-wait');
    const controller = new AbortController();
    const aborted = notes.wait({ signal: controller.signal });
    controller.abort(new Error('page closed'));
    await expect(aborted).rejects.toThrow('page closed');

    let woke = false;
    const waiting = notes.wait().then(() => (woke = true));
    await generateText({ model, instructions: 'You are the app.', prompt: 'go', tools: cadre.tools({ sessionId: 'chat-wait' }), stopWhen: isStepCount(2) });
    expect(woke).toBe(false);
    await waiting;
    expect(text(await notes.take())).toEqual([expect.stringContaining('status: completed')]);
  });

  it('stays pending for the app across a restart: recovery in another runtime never delivers it into cadre’s own loop', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const { cadre, model } = makeCadre(backgroundThenEcho(), store);
    const run = await startBackground(cadre, model, 'chat-recover');
    const other = createCadre({ store, model, maxRetries: 0 });
    const report = await other.recover();
    expect(report.notified).toEqual([]);
    expect(await store.listMessages('chat-recover')).toEqual([]);
    expect(text(await other.notifications('chat-recover').take())).toEqual([expect.stringContaining(`run_id: ${run.id}`)]);
  });
});

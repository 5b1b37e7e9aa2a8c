import { describe, expect, it } from 'vitest';
import { createRunBus, type CadreEvent } from '../runs/run-bus.ts';
import type { RecordedEvent } from '../runs/run-ledger.ts';
import type { MessageRecord, NewMessage } from '../store/records.ts';
import type { RunPatch } from '../store/store.ts';
import { runFixture } from '../store/store-fixtures.ts';
import { createRunRecorder } from './run-recorder.ts';

function setup({ listen = true } = {}) {
  let clock = 1_000;
  const records: Array<{ events: string[]; patch: RunPatch | undefined }> = [];
  const appended: NewMessage[][] = [];
  const bus = createRunBus();
  const live: CadreEvent[] = [];
  const listener = (event: CadreEvent) => live.push(event);
  if (listen) bus.subscribe(listener);
  const recorder = createRunRecorder({
    run: runFixture({
      id: 'run_a',
      child_session_id: 'ses_child',
      status: 'running',
      turns: 2,
      usage: { input_tokens: 5, output_tokens: 1 },
      activity: null,
      last_activity: null,
    }),
    store: {
      appendMessages: async (messages: readonly NewMessage[]) => {
        appended.push([...messages]);
        return messages.map((message, index) => ({ ...message, seq: index + 1 }) as MessageRecord);
      },
      updateMessageContent: async () => {},
    },
    ledger: { record: async (_run, events: RecordedEvent[], patch) => void records.push({ events: events.map((event) => event.type), patch }) },
    bus,
    now: () => new Date(clock).toISOString(),
    nowMs: () => clock,
    journal: { endStep: async (messages) => ({ append: [...messages], rewrite: null }), finish: async () => [] },
    signal: new AbortController().signal,
    activityIntervalMs: 100,
  });
  return { recorder, records, appended, live, bus, listener, tick: (ms: number) => (clock += ms) };
}

describe('createRunRecorder', () => {
  it('publishes every activity at once and stores it at most once per interval on the injected clock', async () => {
    const { recorder, records, live, tick } = setup();
    recorder.setActivity({ kind: 'text', text: 'Reading the files.' });
    tick(10);
    recorder.setActivity({ kind: 'text', text: 'Comparing them.' });
    await recorder.close();
    expect(live.filter((event) => event.type === 'run-event').length).toBe(2);
    // The second change came 10 ms after the first write: still held when the run closed.
    expect(records).toEqual([{ events: ['activity'], patch: { activity: { kind: 'text', text: 'Reading the files.' } } }]);
  });

  it('counts a step and stores its messages and counters with its events in one write', async () => {
    const { recorder, records, appended } = setup();
    recorder.stepStarted(0);
    recorder.toolCall('read_file', { path: 'a.ts' });
    recorder.toolResult('read_file', true);
    await recorder.stepFinished({
      text: '',
      finishReason: 'tool-calls',
      usage: { inputTokens: 10, outputTokens: 3 },
      messages: [{ role: 'assistant', content: 'x' }],
    });
    await recorder.loopEnded();
    await recorder.close();
    expect(recorder.usage).toEqual({ input_tokens: 15, output_tokens: 4 });
    expect(recorder.live.turns).toBe(3);
    expect(appended).toHaveLength(1);
    expect(appended[0][0]).toMatchObject({ session_id: 'ses_child', role: 'assistant' });
    expect(records).toHaveLength(1);
    expect(records[0].events).toEqual(['step-start', 'activity', 'tool-call-start', 'tool-call-end']);
    expect(records[0].patch).toMatchObject({ turns: 3, usage: { input_tokens: 15, output_tokens: 4 } });
  });

  it('builds no live event while nobody listens, yet its live run and its rows stay as with a listener', async () => {
    const { recorder, records, appended, live, bus, listener } = setup({ listen: false });
    recorder.stepStarted(0);
    recorder.toolCall('read_file', { path: 'a.ts' });
    expect(recorder.live).toMatchObject({ activity: { kind: 'tool', tool: 'read_file', argument: 'a.ts' }, last_activity: 'read_file a.ts', turns: 2 });
    bus.subscribe(listener, { sessionId: recorder.live.parent_session_id });
    recorder.setActivity({ kind: 'text', text: 'Reading.' });
    await recorder.stepFinished({
      text: '',
      finishReason: 'tool-calls',
      usage: { inputTokens: 1, outputTokens: 1 },
      messages: [{ role: 'assistant', content: 'x' }],
    });
    await recorder.loopEnded();
    await recorder.close();
    expect(live.map((event) => event.type)).toEqual(['run-event', 'message']);
    expect(recorder.live).toMatchObject({ activity: { kind: 'text', text: 'Reading.' }, last_activity: 'Reading.', turns: 3 });
    expect(appended).toHaveLength(1);
    expect(records[0].events).toEqual(['step-start', 'activity', 'tool-call-start']);
  });

  it('writes nothing once closed, and tells the first write that failed', async () => {
    const { recorder, records } = setup();
    await recorder.close();
    recorder.setActivity({ kind: 'text', text: 'Too late.' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(records).toEqual([]);
    expect(recorder.writeError()).toBeUndefined();
  });
});

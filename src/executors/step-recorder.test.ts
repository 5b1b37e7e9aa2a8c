import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { MessageRecord, NewMessage } from '../store/records.ts';
import { createStepRecorder } from './step-recorder.ts';
import type { StepRows } from './tool-call-journal.ts';

function fakeStore() {
  const writes: string[] = [];
  let seq = 10;
  return {
    writes,
    store: {
      async appendMessages(messages: readonly NewMessage[]): Promise<MessageRecord[]> {
        writes.push(`append ${messages.length}`);
        return messages.map((message) => ({ ...message, seq: ++seq }) as MessageRecord);
      },
      async updateMessageContent(_sessionId: string, seq: number) {
        writes.push(`rewrite ${seq}`);
      },
    },
  };
}

const stored = (seq: number): MessageRecord => ({ session_id: 'ses_a', seq, role: 'assistant', content: [], created_at: 't' }) as unknown as MessageRecord;
const assistant: ModelMessage = { role: 'assistant', content: 'done' };
const results: ModelMessage = { role: 'tool', content: [] };

describe('createStepRecorder', () => {
  it('holds a step until flush, writes the results before rewriting the stored calls, and announces all in transcript order', async () => {
    const { store, writes } = fakeStore();
    const published: number[][] = [];
    const rows: StepRows = { append: [results], rewrite: stored(3) };
    const steps = createStepRecorder({
      store,
      sessionId: 'ses_a',
      now: () => 't',
      journal: { endStep: async () => rows, finish: async () => [] },
      publish: (messages) => published.push(messages.map((message) => message.seq)),
    });
    await steps.endStep([assistant, results]);
    expect(steps.holding()).toBe(true);
    expect(writes).toEqual([]);
    await steps.flush();
    expect(writes).toEqual(['append 1', 'rewrite 3']);
    expect(published).toEqual([[3, 11]]);
    expect(steps.holding()).toBe(false);
    expect(steps.flush()).toBeUndefined();
  });

  it('announces a kept calls message without writing it, and writes plain steps as they came', async () => {
    const { store, writes } = fakeStore();
    const published: number[][] = [];
    const queue: StepRows[] = [
      { append: [], rewrite: null, kept: stored(4) },
      { append: [assistant], rewrite: null },
    ];
    const steps = createStepRecorder({
      store,
      sessionId: 'ses_a',
      now: () => 't',
      journal: { endStep: async () => queue.shift()!, finish: async () => [stored(20)] },
      publish: (messages) => published.push(messages.map((message) => message.seq)),
    });
    await steps.endStep([assistant]);
    expect(steps.flush()).toBeUndefined();
    await steps.endStep([assistant]);
    await steps.flush();
    await steps.finish();
    expect(writes).toEqual(['append 1']);
    expect(published).toEqual([[4], [11], [20]]);
  });

  it('appends the next step’s calls message after the held step in one write, and announces only the step', async () => {
    const { store, writes } = fakeStore();
    const published: number[][] = [];
    const steps = createStepRecorder({
      store,
      sessionId: 'ses_a',
      now: () => 't',
      journal: { endStep: async () => ({ append: [results], rewrite: null, kept: stored(4) }), finish: async () => [] },
      publish: (messages) => published.push(messages.map((message) => message.seq)),
    });
    await steps.endStep([assistant, results]);
    const calls = await steps.flushWith({ session_id: 'ses_a', role: 'assistant', content: [], created_at: 't' });
    expect(writes).toEqual(['append 2']);
    expect(calls.seq).toBe(12);
    expect(published).toEqual([[4, 11]]);
    expect(steps.holding()).toBe(false);
  });
});

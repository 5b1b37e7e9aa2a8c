import { describe, expect, it, vi } from 'vitest';
import { createRunBus } from '../runs/run-bus.ts';
import { runFixture } from '../store/store-fixtures.ts';
import type { MessageRecord } from '../store/records.ts';
import { giveStructuredOutput } from './structured-output.ts';

const schema = { type: 'object', properties: { total: { type: 'integer' } }, required: ['total'] };

function message(seq: number, role: MessageRecord['role'], content: unknown): MessageRecord {
  return { session_id: 'ses_child', seq, role, content, created_at: '2025-01-01T00:00:00.000Z' };
}

const call = (input: unknown) => message(2, 'assistant', [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'final_result', input }]);
const answer = message(3, 'tool', [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'final_result', output: { type: 'text', value: 'Accepted' } }]);

function options(history: MessageRecord[]) {
  const attempt = vi.fn(async () => ({
    result: { text: '{"total": 5}', lastText: '{"total": 5}', finishReason: 'stop', steps: 1, usage: { inputTokens: 1, outputTokens: 1 }, aborted: false },
    budgetMessage: null,
  }));
  return {
    attempt,
    options: {
      run: runFixture({ status: 'running', turns: 1, output_schema: schema }),
      schema,
      setup: { model: 'test' as never, instructions: '', tools: {}, history: Promise.resolve(history) },
      maxRepairs: 2,
      store: { appendMessages: vi.fn(async () => []) },
      bus: createRunBus(),
      now: () => '2025-01-01T00:00:00.000Z',
      recorder: { live: runFixture({ status: 'running', turns: 2 }), loopEnded: async () => {} },
      attempt,
      outcomeOf: async () => ({ text: '{"total": 5}', lastText: '{"total": 5}', finishReason: 'stop', steps: 2 }),
    },
  };
}

describe('a structured run resumed after its process died', () => {
  it('takes the value its transcript already ends with (the call and its result stored), without a model call', async () => {
    const { attempt, options: given } = options([message(1, 'user', 'Count'), call({ total: 3 }), answer]);
    const outcome = await giveStructuredOutput(given);
    expect(attempt).not.toHaveBeenCalled();
    expect(outcome).toEqual({ text: '{\n  "total": 3\n}', lastText: '', finishReason: 'stop', steps: 1, value: { total: 3 } });
  });

  it('calls the model again for a call cut off before its result, an invalid value, or one a later user message follows', async () => {
    for (const history of [
      [message(1, 'user', 'Count'), call({ total: 3 })],
      [message(1, 'user', 'Count'), call({ total: 'three' }), answer],
      [message(1, 'user', 'Count'), call({ total: 3 }), answer, message(4, 'user', 'Count again')],
    ]) {
      const { attempt, options: given } = options(history);
      const outcome = await giveStructuredOutput(given);
      expect(attempt).toHaveBeenCalledTimes(1);
      expect(outcome.value).toEqual({ total: 5 });
    }
  });
});

import { describe, expect, it } from 'vitest';
import type { ExecutionOutcome } from './run-executor.ts';
import { decideRunEnd, type RunEndFacts } from './run-outcome.ts';

const facts: RunEndFacts = { maxTurns: 5, maxResultChars: 10 };
const outcome = (fields: Partial<ExecutionOutcome> = {}): ExecutionOutcome => ({ text: '', lastText: '', finishReason: 'stop', steps: 1, ...fields });

describe('decideRunEnd', () => {
  it('ends a stopped run as its stopper says, keeping the text so far, even when the loop also failed', () => {
    const end = decideRunEnd(outcome({ lastText: 'half', error: { kind: 'model_error', message: 'boom' } }), { ...facts, stopCause: 'user' });
    expect(end).toEqual({ status: 'canceled_by_user', patch: { partial_result: 'half' } });
    expect(decideRunEnd(outcome(), { ...facts, stopCause: 'parent' }).status).toBe('canceled_by_parent');
  });

  it('ends a run its executor could not carry on abandoned, with no error', () => {
    expect(decideRunEnd(outcome({ abandoned: 'worker died', lastText: ' ' }), facts)).toEqual({
      status: 'abandoned',
      patch: { partial_result: null, error: null },
    });
  });

  it('fails a run whose time ran out with a timeout error naming the limit', () => {
    const end = decideRunEnd(outcome({ text: 'late answer' }), { ...facts, timedOut: true, runTimeoutMs: 1000 });
    expect(end).toEqual({ status: 'failed', patch: { partial_result: null, error: { kind: 'timeout', message: 'The run took longer than 1000 ms.' } } });
  });

  it('fails a run with the error its executor reported', () => {
    const error = { kind: 'budget_exceeded' as const, message: 'spent' };
    expect(decideRunEnd(outcome({ error, lastText: 'so far' }), facts)).toEqual({ status: 'failed', patch: { partial_result: 'so far', error } });
  });

  it('completes a run with a final text, marked truncated when longer than the parent takes', () => {
    expect(decideRunEnd(outcome({ text: 'short' }), facts)).toEqual({
      status: 'completed',
      patch: { result: { text: 'short', truncated: false, original_length: 5 } },
    });
    expect(decideRunEnd(outcome({ text: 'a much longer answer' }), facts).patch.result).toMatchObject({ truncated: true, original_length: 20 });
  });

  it('records a summary the parent got, and a failed one without marking the result summarized', () => {
    const summarized = decideRunEnd(outcome({ text: 'a much longer answer', summary: { summary: 'brief', error: null } }), facts);
    expect(summarized.patch.result).toEqual({
      text: 'a much longer answer',
      truncated: false,
      original_length: 20,
      summarized: true,
      summary: 'brief',
      summary_error: null,
    });
    const failed = decideRunEnd(outcome({ text: 'a much longer answer', summary: { summary: null, error: 'timeout' } }), facts);
    expect(failed.patch.result).toMatchObject({ truncated: true, summarized: false, summary: null, summary_error: 'timeout' });
  });

  it('fails a run that spent every turn on tool calls with max_turns', () => {
    const end = decideRunEnd(outcome({ finishReason: 'tool-calls', steps: 5, lastText: 'working' }), facts);
    expect(end).toEqual({
      status: 'failed',
      patch: { partial_result: 'working', error: { kind: 'max_turns', message: 'The subagent used all 5 turns without a final answer.' } },
    });
  });

  it('ends a run with no final text and turns left completed_empty', () => {
    expect(decideRunEnd(outcome({ finishReason: 'tool-calls', steps: 4 }), facts)).toEqual({ status: 'completed_empty', patch: { partial_result: null } });
    expect(decideRunEnd(outcome({ text: '   ' }), facts).status).toBe('completed_empty');
  });
});

import { describe, expect, it } from 'vitest';
import { runFixture } from '../store-fixtures.ts';
import { createAnswerIndex, expandContent, MissingResultError, messagesFromRows, parseStoredContent, referToAnswer } from './result-refs.ts';

const text = `${'An answer long enough to be stored once. '.repeat(3)}"quoted" \\ 🚀`;
const finished = runFixture({ id: 'run_1', status: 'completed', result: { text, truncated: false, original_length: text.length } });

function toolResult(value: string, toolCallId = 'call_1') {
  return [{ type: 'tool-result', toolCallId, toolName: 'agent', output: { type: 'text', value } }];
}

describe('answers stored once', () => {
  it('refers to a noted answer in the tool result of its call, and reads it back exactly', () => {
    const index = createAnswerIndex();
    index.note(finished);
    const content = toolResult(`run_id: run_1\n\n${text}\n\n${text}`);
    const stored = index.encode('ses_1', content, false);
    expect(stored).toBe(JSON.stringify({ cadre_result_of: ['run_1'], content: toolResult('run_id: run_1\n\n\u00010\u0001\n\n\u00010\u0001') }));
    expect(expandContent(parseStoredContent(stored), new Map([['run_1', text]]), 'here')).toEqual(content);
    // The content given is never changed.
    expect(content[0].output.value).toContain(text);
  });

  it('stores in full what it cannot refer to exactly: another call, another session, a short or unfinished answer, a marker of its own', () => {
    const index = createAnswerIndex();
    index.note(finished);
    index.note(runFixture({ id: 'run_2', tool_call_id: 'call_2', status: 'running', result: { text, truncated: false, original_length: text.length } }));
    index.note(runFixture({ id: 'run_3', tool_call_id: 'call_3', status: 'completed', result: { text: 'short', truncated: false, original_length: 5 } }));
    for (const [session, content] of [
      ['ses_1', toolResult(text, 'call_9')],
      ['ses_2', toolResult(text)],
      ['ses_1', toolResult(text, 'call_2')],
      ['ses_1', toolResult(`short ${'x'.repeat(80)}`, 'call_3')],
      ['ses_1', toolResult(`${text}\u0001`)],
      ['ses_1', [...toolResult(text), { type: 'tool-result', toolCallId: 'call_8', toolName: 'x', output: { type: 'text', value: '\u0001' } }]],
    ] as const) {
      expect(index.encode(session, content, true)).toBe(JSON.stringify(content));
    }
    // A string (a notification) only when asked to look into text.
    expect(index.encode('ses_1', `done: ${text}`, false)).toBe(JSON.stringify(`done: ${text}`));
    expect(index.encode('ses_1', `done: ${text}`, true)).toBe(JSON.stringify({ cadre_result_of: ['run_1'], content: 'done: \u00010\u0001' }));
  });

  it("refers to a run's answer in its last message's text parts only", () => {
    const content = [
      { type: 'reasoning', text },
      { type: 'text', text, providerOptions: { p: { id: 1 } } },
    ];
    const stored = referToAnswer(JSON.stringify(content), { runId: 'run_1', text })!;
    expect(JSON.parse(stored).content).toEqual([content[0], { ...content[1], text: '\u00010\u0001' }]);
    expect(referToAnswer(JSON.stringify([{ type: 'text', text: 'other' }]), { runId: 'run_1', text })).toBeNull();
    expect(referToAnswer(stored, { runId: 'run_1', text })).toBeNull();
  });

  it('says which run is missing when a referred result is gone, and reads rows without references as stored', () => {
    const rows = [
      { session_id: 'ses_1', seq: 1, role: 'user', content: JSON.stringify({ not: 'a reference' }), created_at: 'now' },
      {
        session_id: 'ses_1',
        seq: 2,
        role: 'tool',
        content: JSON.stringify({ cadre_result_of: ['run_9'], content: toolResult('\u00010\u0001') }),
        created_at: 'now',
      },
    ];
    let asked: string[] = [];
    expect(() =>
      messagesFromRows(rows, (ids) => {
        asked = [...ids];
        return new Map([['run_9', null]]);
      }),
    ).toThrow(new MissingResultError('run_9', "Message 2 of session 'ses_1'"));
    expect(asked).toEqual(['run_9']);
    expect(messagesFromRows(rows.slice(0, 1), () => new Map())[0].content).toEqual({ not: 'a reference' });
  });

  it('forgets the answers of the oldest sessions past its bounds', () => {
    const index = createAnswerIndex({ limit: 2, maxChars: 3 * text.length });
    const note = (id: string, session: string) =>
      index.note(
        runFixture({ id, parent_session_id: session, tool_call_id: id, status: 'completed', result: { text, truncated: false, original_length: text.length } }),
      );
    const refers = (id: string, session: string) => index.encode(session, toolResult(text, id), false).startsWith('{');
    note('run_a', 'ses_a');
    note('run_b', 'ses_b');
    note('run_c', 'ses_c');
    expect([refers('run_a', 'ses_a'), refers('run_b', 'ses_b'), refers('run_c', 'ses_c')]).toEqual([false, true, true]);
    const big = createAnswerIndex({ maxChars: text.length - 1 });
    big.note(finished);
    expect(big.encode('ses_1', toolResult(text), false)).toBe(JSON.stringify(toolResult(text)));
  });
});

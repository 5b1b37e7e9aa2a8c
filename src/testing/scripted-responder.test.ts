import { describe, expect, it } from 'vitest';
import { conversationFromRequest } from './conversation.ts';
import type { Script, ScriptedMessage, ScriptedRequest } from './script.ts';
import { createScriptedResponder } from './scripted-responder.ts';

function request(messages: ScriptedMessage[], overrides: Partial<ScriptedRequest> = {}): ScriptedRequest {
  let turn = 0;
  for (let index = messages.length - 1; index >= 0 && messages[index].role !== 'user'; index--) {
    if (messages[index].role === 'assistant') turn++;
  }
  return { model: 'scripted', system: '', messages, tools: [], stream: false, turn, ...overrides };
}

async function answer(script: Script, scripted: ScriptedRequest) {
  return createScriptedResponder(script)(conversationFromRequest(scripted));
}

const user = (content: string): ScriptedMessage => ({ role: 'user', content });
const assistant = (content: string): ScriptedMessage => ({ role: 'assistant', content });
const toolResult = (content: string): ScriptedMessage => ({ role: 'tool', content, tool_call_id: 'call_1' });

describe('createScriptedResponder', () => {
  const script: Script = [
    { when: { system_includes: 'researcher' }, turns: [{ text: 'research 0' }, { text: 'research 1' }] },
    { when: { user_includes: 'weather', has_tool: 'forecast' }, turns: [{ text: 'forecast' }] },
    { when: { last_user_includes: 'again' }, turns: [{ text: 'again 0' }], after: { text: 'again after' } },
    { turns: [{ text: 'fallback 0' }] },
  ];

  it('counts the turn as assistant messages after the last user message', async () => {
    const first = await answer(script, request([user('hi')], { system: 'You are a researcher.' }));
    expect(first.text).toBe('research 0');
    const afterTool = request([user('hi'), assistant(''), toolResult('ok')], { system: 'You are a researcher.' });
    expect(afterTool.turn).toBe(1);
    expect((await answer(script, afterTool)).text).toBe('research 1');
  });

  it('starts again at turn 0 after a new user message', async () => {
    const scripted = request([user('hi'), assistant('a'), user('and now?')], { system: 'researcher' });
    expect((await answer(script, scripted)).text).toBe('research 0');
  });

  it('requires every condition of `when` to hold', async () => {
    expect((await answer(script, request([user('the weather')], { tools: ['forecast'] }))).text).toBe('forecast');
    expect((await answer(script, request([user('the weather')], { tools: ['other'] }))).text).toBe('fallback 0');
  });

  it('matches user_includes against the first user message and last_user_includes against the last', async () => {
    const scripted = request([user('weather'), assistant('a'), user('try again')], { tools: ['forecast'] });
    expect((await answer(script, scripted)).text).toBe('forecast');
    expect((await answer(script, request([user('try again')]))).text).toBe('again 0');
  });

  it('answers past the last turn with `after`, or with a fixed text without it', async () => {
    const afterTurns = request([user('again'), assistant('a'), assistant('b')]);
    expect((await answer(script, afterTurns)).text).toBe('again after');
    const fallback = request([user('x'), assistant('a')]);
    expect((await answer(script, fallback)).text).toBe('(script has no more turns)');
  });

  it('answers with a 400 error naming the turn when no rule matches', async () => {
    const reply = await answer([{ when: { user_includes: 'nothing' }, turns: [] }], request([user('hello')]));
    // No type: each wire names a 400 in its own words.
    expect(reply.error?.status).toBe(400);
    expect(reply.error?.type).toBeUndefined();
    expect(reply.error?.message).toContain('"hello"');
  });

  it('replaces {{task}} with the first user message', async () => {
    const scripted = request([user('count files'), assistant('a'), user('more')]);
    expect((await answer([{ turns: [{ text: 'Done: {{task}} ({{task}})' }] }], scripted)).text).toBe('Done: count files (count files)');
  });

  it('fills in defaults: tool call ids unique per conversation, finish reason, estimated usage', async () => {
    const reply = await answer(
      [
        {
          turns: [
            {
              tool_calls: [
                { name: 'a', arguments: { x: 1 } },
                { name: 'b', arguments: 'not json', id: 'mine' },
              ],
            },
          ],
        },
      ],
      request([user('12345678')]),
    );
    expect(reply.toolCalls).toEqual([
      { id: 'call_1_0_0', name: 'a', arguments: '{"x":1}' },
      { id: 'mine', name: 'b', arguments: 'not json' },
    ]);
    expect(reply.finishReason).toBe('tool_calls');
    expect(reply.inputTokens).toBe(2);
    expect(reply.chunkSize).toBe(20);
  });

  it('passes the whole request to a respond function', async () => {
    const scripted = request([user('hi')], { tools: ['t'] });
    let seen: ScriptedRequest | undefined;
    const reply = await createScriptedResponder(async (received) => {
      seen = received;
      return { text: `turn ${received.turn}` };
    })(conversationFromRequest(scripted));
    expect(seen).toBe(scripted);
    expect(reply.text).toBe('turn 0');
  });

  it('rejects a script with a misspelt condition', () => {
    expect(() => createScriptedResponder([{ when: { user_include: 'x' }, turns: [] } as never])).toThrow(/user_include/);
  });
});

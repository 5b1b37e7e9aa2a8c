import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, isStepCount, streamText, tool, type LanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Script } from './script.ts';
import { startScriptedServer, type ScriptedServer } from './scripted-server.ts';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const forecast = tool({
  description: 'The forecast for a city.',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

const weatherScript: Script = [
  {
    when: { user_includes: 'weather', has_tool: 'forecast', system_includes: 'forecaster' },
    turns: [
      {
        text: 'Looking.',
        tool_calls: [
          { name: 'forecast', arguments: { city: 'Paris' } },
          { name: 'forecast', arguments: { city: 'Oslo' } },
        ],
      },
      { text: 'Both sunny.', chunk_size: 3, usage: { input_tokens: 30, output_tokens: 3, cache_read_input_tokens: 12, cache_creation_input_tokens: 8 } },
    ],
  },
];

const wires = {
  messages: (baseURL: string) => createAnthropic({ baseURL, apiKey: 'secret-key-123' })('claude-scripted'),
  responses: (baseURL: string) => createOpenAI({ baseURL, apiKey: 'secret-key-123' })('gpt-scripted'),
  'chat-completions': (baseURL: string) => createOpenAICompatible({ name: 'scripted', baseURL, apiKey: 'secret-key-123', includeUsage: true })('scripted'),
} as const;

async function serve(wire: keyof typeof wires, script: Script): Promise<LanguageModel> {
  server = await startScriptedServer({ script });
  return wires[wire](server.baseURL);
}

describe.each(Object.keys(wires) as Array<keyof typeof wires>)('startScriptedServer on the %s wire', (wire) => {
  it.each([true, false])('makes two tool calls, then answers with their results (streaming: %s)', async (streaming) => {
    const model = await serve(wire, weatherScript);
    const options = { model, system: 'You are a forecaster.', prompt: 'weather please', tools: { forecast }, stopWhen: isStepCount(5) };
    const result = streaming ? await streamText(options).steps : (await generateText(options)).steps;
    expect(result.map((step) => step.text)).toEqual(['Looking.', 'Both sunny.']);
    expect(result[0].toolCalls.map((call) => call.input)).toEqual([{ city: 'Paris' }, { city: 'Oslo' }]);
    expect(result[0].finishReason).toBe('tool-calls');
    expect(result[1].finishReason).toBe('stop');
    const cacheWrite = wire === 'messages' ? 8 : undefined;
    // Chat Completions and Responses have no count of tokens written to the cache.
    expect(result[1].usage).toMatchObject({ inputTokens: 30, outputTokens: 3, inputTokenDetails: { cacheReadTokens: 12, cacheWriteTokens: cacheWrite } });
    const second = server!.requests[1];
    expect(second).toMatchObject({ wire, turn: 1, stream: streaming, system: 'You are a forecaster.', tools: ['forecast'] });
    expect(second.messages).toEqual([
      { role: 'user', content: 'weather please' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: 'call_1_0_0', name: 'forecast', arguments: '{"city":"Paris"}' },
          { id: 'call_1_0_1', name: 'forecast', arguments: '{"city":"Oslo"}' },
        ],
      },
      { role: 'tool', content: 'sunny in Paris', tool_call_id: 'call_1_0_0' },
      { role: 'tool', content: 'sunny in Oslo', tool_call_id: 'call_1_0_1' },
    ]);
    expect(JSON.stringify(server!.received)).not.toContain('secret-key-123');
  });

  it('streams text in deltas of chunk_size', async () => {
    const model = await serve(wire, [{ turns: [{ text: 'Hello, {{task}}!', chunk_size: 4 }] }]);
    const deltas: string[] = [];
    for await (const part of streamText({ model, prompt: 'world' }).fullStream) if (part.type === 'text-delta') deltas.push(part.text);
    expect(deltas).toEqual(['Hell', 'o, w', 'orld', '!']);
  });

  it('answers a scripted error with its status and the wire’s error type', async () => {
    const model = await serve(wire, [{ turns: [{ error: { status: 429, message: 'Slow down.' } }] }]);
    const error = await generateText({ model, prompt: 'hi', maxRetries: 0 }).catch((caught: unknown) => caught);
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 429, isRetryable: true });
    expect((error as APICallError).responseBody).toContain('rate_limit_error');
    expect((error as APICallError).message).toContain('Slow down.');
  });

  it('reports a length cut as the finish reason', async () => {
    const model = await serve(wire, [{ turns: [{ text: 'cut', finish_reason: 'length' }] }]);
    expect(await streamText({ model, prompt: 'hi' }).finishReason).toBe('length');
  });

  it('drops the connection after some streamed text for a reset fault', async () => {
    const model = await serve(wire, [{ turns: [{ text: 'abcdefghij', chunk_size: 2, fault: { type: 'reset', after_chars: 4 } }] }]);
    const text: string[] = [];
    const result = streamText({ model, prompt: 'hi', maxRetries: 0, onError: () => {} });
    const failure = await (async () => {
      for await (const part of result.fullStream) if (part.type === 'text-delta') text.push(part.text);
    })().catch((error: unknown) => error);
    expect(String((failure as Error | undefined)?.cause)).toMatch(/terminated/);
    expect(text.join('')).toBe('abcd');
  });
});

describe('the Messages wire', () => {
  it('answers count_tokens, lists models, and names an invalid body in Anthropic’s error shape', async () => {
    server = await startScriptedServer({ script: [{ turns: [] }] });
    const post = (path: string, body: object) =>
      fetch(`${server!.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const counted = await post('/v1/messages/count_tokens', { model: 'm', messages: [{ role: 'user', content: 'twelve chars' }] });
    expect(await counted.json()).toEqual({ input_tokens: 3 });
    const uncountable = await post('/v1/messages/count_tokens', { model: 'm' });
    expect([uncountable.status, (await uncountable.json()).error.type]).toEqual([400, 'invalid_request_error']);
    const models = await (await fetch(`${server.url}/v1/models`)).json();
    expect(models).toMatchObject({ data: [{ id: 'scripted', type: 'model' }], has_more: false });
    const bad = await post('/v1/messages', { messages: 'nope' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('messages') } });
    expect(server.received.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /v1/messages/count_tokens',
      'POST /v1/messages/count_tokens',
      'GET /v1/models',
      'POST /v1/messages',
    ]);
  });

  it('reads a user message holding tool results and text as tool messages, then a user message', async () => {
    server = await startScriptedServer({ script: [{ turns: [{ text: 'first' }, { text: 'second' }] }] });
    const response = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'done' }] },
              { type: 'text', text: 'and now?' },
            ],
          },
          { role: 'system', content: 'A mid-conversation note.' },
        ],
      }),
    });
    expect((await response.json()).content).toEqual([{ type: 'text', text: 'first' }]);
    expect(server.requests[0]).toMatchObject({
      system: 'Be brief.\n\nA mid-conversation note.',
      turn: 0,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', tool_calls: [{ id: 't1', name: 'f', arguments: '{"a":1}' }] },
        { role: 'tool', content: 'done', tool_call_id: 't1' },
        { role: 'user', content: 'and now?' },
      ],
    });
  });
});

describe('the Responses wire', () => {
  async function postResponses(body: object): Promise<Response> {
    return fetch(`${server!.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  it('continues from previous_response_id and resolves item references to its own items', async () => {
    server = await startScriptedServer({ script: [{ turns: [{ tool_calls: [{ name: 'f', arguments: { a: 1 } }] }, { text: 'then' }] }] });
    const first = await (await postResponses({ model: 'm', instructions: 'Be brief.', input: 'go' })).json();
    expect(first).toMatchObject({ id: 'resp_scripted_1', status: 'completed', output: [{ type: 'function_call', id: 'fc_scripted_1_0', name: 'f' }] });
    const output = { type: 'function_call_output', call_id: first.output[0].call_id, output: 'ok' };
    await postResponses({ model: 'm', previous_response_id: first.id, input: [output] });
    await postResponses({ model: 'm', input: [{ role: 'user', content: 'go' }, { type: 'item_reference', id: 'fc_scripted_1_0' }, output] });
    const expected = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1_0_0', name: 'f', arguments: '{"a":1}' }] },
      { role: 'tool', content: 'ok', tool_call_id: 'call_1_0_0' },
    ];
    // As on OpenAI, the earlier response's instructions do not carry over.
    expect(server.requests[1]).toMatchObject({ system: '', turn: 1, messages: expected });
    expect(server.requests[2]).toMatchObject({ system: '', turn: 1, messages: expected });
  });

  it('refuses a reference to an unknown item or response with a 404 in OpenAI’s error shape', async () => {
    server = await startScriptedServer({ script: [{ turns: [] }] });
    for (const body of [{ input: [{ type: 'item_reference', id: 'msg_nope' }] }, { input: 'hi', previous_response_id: 'resp_nope' }]) {
      const response = await postResponses(body);
      expect(response.status).toBe(404);
      expect((await response.json()).error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/'(msg|resp)_nope' not found/) });
    }
  });

  it('names a namespace’s tools, and calls one in its namespace, or a custom tool with free-form input', async () => {
    server = await startScriptedServer({
      script: [
        {
          turns: [
            {
              tool_calls: [
                { name: 'spawn_agent', arguments: { message: 'go' } },
                { name: 'apply_patch', arguments: '*** Begin Patch' },
              ],
            },
          ],
        },
      ],
    });
    const tools = [
      { type: 'namespace', name: 'multi_agent', tools: [{ type: 'function', name: 'spawn_agent', parameters: {} }] },
      { type: 'custom', name: 'apply_patch' },
      { type: 'web_search' },
    ];
    const body = await (await postResponses({ model: 'm', input: 'hi', tools })).json();
    expect(server.requests[0].tools).toEqual(['multi_agent', 'spawn_agent', 'apply_patch', 'web_search']);
    expect(body.output).toMatchObject([
      { type: 'function_call', namespace: 'multi_agent', name: 'spawn_agent', arguments: '{"message":"go"}' },
      { type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch' },
    ]);
    const events = await (await postResponses({ model: 'm', input: 'hi', tools, stream: true })).text();
    expect(events).toContain('event: response.custom_tool_call_input.delta\ndata: ');
  });
});

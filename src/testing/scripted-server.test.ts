import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, isStepCount, streamText, tool } from 'ai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { RespondFunction, Script } from './script.ts';
import { startScriptedServer, type ScriptedServer } from './scripted-server.ts';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(script: Script | RespondFunction) {
  server = await startScriptedServer({ script });
  const provider = createOpenAICompatible({ name: 'scripted', baseURL: server.baseURL, apiKey: 'secret-key-123', includeUsage: true });
  return { server, model: provider('scripted-model') };
}

const forecast = tool({
  description: 'The forecast for a city.',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

const weatherScript: Script = [
  {
    when: { user_includes: 'weather', has_tool: 'forecast' },
    turns: [
      {
        text: 'Looking.',
        tool_calls: [
          { name: 'forecast', arguments: { city: 'Paris' } },
          { name: 'forecast', arguments: { city: 'Oslo' } },
        ],
      },
      { text: 'Both sunny.', usage: { input_tokens: 30, output_tokens: 3 } },
    ],
  },
];

async function postChat(body: object): Promise<Response> {
  return fetch(`${server!.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('startScriptedServer', () => {
  it('streams text in deltas of chunk_size through the OpenAI-compatible provider', async () => {
    const { model } = await serve([{ turns: [{ text: 'Hello, {{task}}!', chunk_size: 4, usage: { input_tokens: 7, output_tokens: 2 } }] }]);
    const result = streamText({ model, prompt: 'world' });
    const deltas: string[] = [];
    for await (const part of result.fullStream) if (part.type === 'text-delta') deltas.push(part.text);
    expect(deltas).toEqual(['Hell', 'o, w', 'orld', '!']);
    expect(await result.usage).toMatchObject({ inputTokens: 7, outputTokens: 2 });
    expect(await result.finishReason).toBe('stop');
  });

  it('answers without streaming', async () => {
    const { model, server } = await serve([{ turns: [{ text: 'Plain answer.' }] }]);
    const result = await generateText({ model, system: 'Be brief.', prompt: 'hi' });
    expect(result.text).toBe('Plain answer.');
    expect(server.requests).toEqual([
      {
        wire: 'chat-completions',
        model: 'scripted-model',
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'hi' }],
        tools: [],
        stream: false,
        turn: 0,
      },
    ]);
  });

  it('makes two tool calls in one turn, then answers with the results in the next turn', async () => {
    const { model, server } = await serve(weatherScript);
    const result = streamText({ model, prompt: 'weather please', tools: { forecast }, stopWhen: isStepCount(5) });
    expect(await result.text).toBe('Both sunny.');
    const steps = await result.steps;
    expect(steps[0].toolCalls.map((call) => call.input)).toEqual([{ city: 'Paris' }, { city: 'Oslo' }]);
    expect(steps[0].toolResults.map((toolResult) => toolResult.output)).toEqual(['sunny in Paris', 'sunny in Oslo']);
    const second = server.requests[1];
    expect(second.turn).toBe(1);
    expect(second.messages.slice(1)).toEqual([
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
  });

  it('answers a scripted error with its status, surfaced by the SDK as an APICallError', async () => {
    const { model } = await serve([{ turns: [{ error: { status: 429, message: 'Slow down.' } }] }]);
    const error = await generateText({ model, prompt: 'hi', maxRetries: 0 }).catch((caught: unknown) => caught);
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 429, message: 'Slow down.', isRetryable: true });
    expect(JSON.parse((error as APICallError).responseBody!)).toEqual({
      error: { message: 'Slow down.', type: 'rate_limit_error', param: null, code: null },
    });
  });

  it('stops a delay when the client aborts, and closes without waiting for it', async () => {
    const { model, server } = await serve([{ turns: [{ text: 'late', delay_ms: 20_000 }] }]);
    const started = performance.now();
    const error = await generateText({ model, prompt: 'hi', maxRetries: 0, abortSignal: AbortSignal.timeout(50) }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    await server.close();
    // Far under the 20 s delay, with room for a busy machine.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('clears its timer as soon as the client disconnects during a delay', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const { model, server } = await serve([{ turns: [{ text: 'late', delay_ms: 20_000 }] }]);
    const before = timers();
    const controller = new AbortController();
    const pending = generateText({ model, prompt: 'hi', maxRetries: 0, abortSignal: controller.signal }).catch(() => {});
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    controller.abort();
    await pending;
    await vi.waitFor(() => expect(timers()).toBeLessThanOrEqual(before), { timeout: 5_000 });
  });

  it('closes promptly while a stream is paused between chunks', async () => {
    const { model, server } = await serve([{ turns: [{ text: 'one two three', chunk_size: 4, chunk_delay_ms: 20_000 }] }]);
    const result = streamText({ model, prompt: 'hi', maxRetries: 0, onError: () => {} });
    const reader = result.textStream[Symbol.asyncIterator]();
    expect((await reader.next()).value).toBe('one ');
    const started = performance.now();
    await server.close();
    // Far under the 20 s pause, with room for a busy machine.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('keeps concurrent conversations apart and matches each to its rule', async () => {
    const script: Script = ['alpha', 'beta', 'gamma'].map((name, index) => ({
      when: { user_includes: name },
      turns: [
        { tool_calls: [{ name: 'forecast', arguments: { city: name } }], delay_ms: 30 - index * 10 },
        { text: `${name} done`, chunk_size: 2 },
      ],
    }));
    const { model } = await serve(script);
    const prompts = Array.from({ length: 12 }, (_, index) => ['alpha', 'beta', 'gamma'][index % 3]);
    const results = await Promise.all(
      prompts.map((prompt) => streamText({ model, prompt: `task ${prompt}`, tools: { forecast }, stopWhen: isStepCount(3) }).text),
    );
    expect(results).toEqual(prompts.map((prompt) => `${prompt} done`));
  });

  it('speaks OpenAI server-sent events, with a usage chunk only when asked', async () => {
    server = await startScriptedServer({ script: [{ turns: [{ text: 'ab', tool_calls: [{ name: 'f', arguments: '{}' }] }] }] });
    const withUsage = await (
      await postChat({ model: 'm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] })
    ).text();
    const events = withUsage.trim().split('\n\n');
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'ab' },
      { tool_calls: [{ index: 0, id: 'call_1_0_0', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{}' } }] },
      {},
      null,
    ]);
    expect(chunks[4].choices[0].finish_reason).toBe('tool_calls');
    expect(chunks[5].usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    const withoutUsage = await (await postChat({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] })).text();
    expect(withoutUsage).not.toContain('"usage"');
  });

  it('lists a model, and answers unknown routes and bad bodies in the OpenAI error shape', async () => {
    server = await startScriptedServer({ script: [{ turns: [] }] });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const models = await fetch(`${server.baseURL}/models`);
    expect((await models.json()).data[0].id).toBe('scripted');
    const missing = await fetch(`${server.baseURL}/embeddings`, { method: 'POST' });
    expect(missing.status).toBe(404);
    const bad = await postChat({ messages: 'nope' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('messages') });
  });

  it('records requests without their headers, so no API key is kept', async () => {
    const { model, server } = await serve([{ turns: [{ text: 'ok' }] }]);
    await generateText({ model, prompt: 'hi' });
    expect(JSON.stringify(server.requests)).not.toContain('secret-key-123');
  });

  it('answers with a 500 when a respond function throws', async () => {
    const { model } = await serve(() => {
      throw new Error('broken script');
    });
    const error = await generateText({ model, prompt: 'hi', maxRetries: 0 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ statusCode: 500, message: 'The respond function failed: broken script' });
  });
});

describe('startScriptedServer faults', () => {
  it('sends retry-after headers with an error and echoes the Authorization header where the message asks for it', async () => {
    await serve([{ turns: [{ error: { status: 429, message: 'Slow down, {{authorization}}.', retry_after: 2, retry_after_ms: 2000 } }] }]);
    const response = await fetch(`${server!.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer secret-key-123' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(response.headers.get('retry-after-ms')).toBe('2000');
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe('Slow down, Bearer secret-key-123.');
  });

  it('drops the connection for reset, before a response or after some streamed text', async () => {
    await serve([
      { when: { user_includes: 'before' }, turns: [{ fault: { type: 'reset' } }] },
      { turns: [{ text: 'abcdefghij', chunk_size: 2, fault: { type: 'reset', after_chars: 4 } }] },
    ]);
    await expect(postChat({ model: 'm', messages: [{ role: 'user', content: 'before' }] })).rejects.toThrow();
    const response = await postChat({ model: 'm', stream: true, messages: [{ role: 'user', content: 'during' }] });
    expect(response.status).toBe(200);
    let body = '';
    await expect(
      (async () => {
        for await (const chunk of response.body!) body += Buffer.from(chunk).toString('utf8');
      })(),
    ).rejects.toThrow();
    expect(body).toContain('"content":"ab"');
    expect(body).toContain('"content":"cd"');
    expect(body).not.toContain('"content":"ef"');
  });

  it('keeps a hanging request open and silent until the client gives up', async () => {
    await serve([{ turns: [{ fault: { type: 'hang' } }] }]);
    const started = Date.now();
    const request = fetch(`${server!.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      signal: AbortSignal.timeout(300),
    });
    await expect(request).rejects.toThrow(/aborted|timeout/i);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(server!.requests).toHaveLength(1);
  });
});

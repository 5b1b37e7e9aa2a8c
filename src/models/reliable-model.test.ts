import { generateText, streamText, tool, type LanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedLanguageModel } from '../testing/scripted-language-model.ts';
import type { RespondFunction, ScriptedTurn } from '../testing/script.ts';
import { ModelCallError } from './model-call-error.ts';
import { createProviderGates } from './provider-gates.ts';
import { reliableModel, type ReliableModelOptions } from './reliable-model.ts';
import { createSecretRedactor } from './secret-redactor.ts';

const key = 'qz-Unusual-Key-Shape-4242-abcdefgh';
const redactor = createSecretRedactor({ env: { CADRE_API_KEY: key } });

/** A scripted model that answers with `turns` in order (the last one repeats), counting requests. */
function counted(turns: ScriptedTurn[] | ((call: number) => ScriptedTurn)) {
  const calls: number[] = [];
  const respond: RespondFunction = () => {
    calls.push(calls.length);
    return typeof turns === 'function' ? turns(calls.length) : turns[Math.min(calls.length - 1, turns.length - 1)];
  };
  return { model: scriptedLanguageModel(respond), calls };
}

function wrap(model: ReturnType<typeof scriptedLanguageModel>, options: Partial<ReliableModelOptions> = {}): LanguageModel {
  return reliableModel(model, { redactor, timeoutMs: 1000, maxRetries: 2, retryDelayMs: 1, ...options });
}

type Mode = 'streamed' | 'unstreamed';

/** One model call as the agent loop makes it, with the SDK's own retries off; never throws. */
async function call(model: LanguageModel, mode: Mode, tools = {}): Promise<{ text: string; error?: unknown; toolInputs: unknown[] }> {
  const toolInputs: unknown[] = [];
  if (mode === 'unstreamed') {
    try {
      const result = await generateText({ model, prompt: 'hello', maxRetries: 0, tools });
      for (const part of result.toolCalls) toolInputs.push(part.input);
      return { text: result.text, error: undefined, toolInputs };
    } catch (error) {
      return { text: '', error, toolInputs };
    }
  }
  let text = '';
  let error: unknown;
  const result = streamText({ model, prompt: 'hello', maxRetries: 0, tools, onError: () => {} });
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') text += part.text;
    if (part.type === 'tool-call') toolInputs.push(part.input);
    if (part.type === 'error') error ??= part.error;
  }
  return { text, error, toolInputs };
}

const modes: Mode[] = ['streamed', 'unstreamed'];

describe('reliableModel: timeouts', () => {
  it.each(modes)('aborts a %s request the provider never answers, retries it, then fails saying the provider did not answer in time', async (mode) => {
    const { model, calls } = counted([{ fault: { type: 'hang' } }]);
    const started = Date.now();
    const result = await call(wrap(model, { timeoutMs: 60 }), mode);
    expect(ModelCallError.isInstance(result.error)).toBe(true);
    expect((result.error as Error).message).toBe('The model provider did not answer within 0.06 s (3 attempts).');
    expect(calls).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('aborts a stream that starts and then sends no chunk, before any output, as a failed attempt', async () => {
    const { model, calls } = counted((call) => (call < 3 ? { text: 'late', fault: { type: 'hang', after_chars: 0 } } : { text: 'At last.' }));
    const result = await call(wrap(model, { timeoutMs: 60 }), 'streamed');
    expect(result).toMatchObject({ text: 'At last.', error: undefined });
    expect(calls).toHaveLength(3);
  });

  it('does not count the time the consumer spends away (a long tool call) against the provider', async () => {
    const { model } = counted([{ text: 'Some words, then more words.', chunk_size: 5 }]);
    const direct = wrap(model, { timeoutMs: 60 }) as unknown as { doStream(options: object): Promise<{ stream: ReadableStream<{ type: string }> }> };
    const { stream } = await direct.doStream({ prompt: [] });
    const types: string[] = [];
    for await (const part of stream) {
      types.push(part.type);
      if (types.length === 4) await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(types).not.toContain('error');
    expect(types.at(-1)).toBe('finish');
  });

  it('ends a stream that stalls after output with an error that keeps the text, without a blind retry', async () => {
    const { model, calls } = counted([{ text: 'The first part arrived, then', chunk_size: 5, fault: { type: 'hang', after_chars: 10 } }]);
    const result = await call(wrap(model, { timeoutMs: 60 }), 'streamed');
    expect(result.text).toBe('The first ');
    expect((result.error as Error).message).toBe(
      'The model provider stopped answering for 0.06 s in the middle of its answer; the 10 characters it sent are kept as the partial result.',
    );
    expect(calls).toHaveLength(1);
  });
});

describe('reliableModel: one retry policy', () => {
  it.each(modes)('retries a connection reset before any output the same way when %s', async (mode) => {
    const reset: ScriptedTurn = { text: 'never sent', fault: { type: 'reset', after_chars: 0 } };
    const resetBeforeResponse: ScriptedTurn = { fault: { type: 'reset' } };
    const { model, calls } = counted((call) => (call === 1 ? resetBeforeResponse : call === 2 ? reset : { text: 'Third time lucky.' }));
    const result = await call(wrap(model), mode);
    expect(result).toMatchObject({ text: 'Third time lucky.', error: undefined });
    expect(calls).toHaveLength(3);

    const failing = counted([resetBeforeResponse]);
    const failed = await call(wrap(failing.model), mode);
    expect((failed.error as Error).message).toBe('The connection to the model provider failed (3 attempts): terminated (ECONNRESET)');
    expect(failing.calls).toHaveLength(3);
  });

  it('keeps what a stream produced when the connection drops after output and does not retry it', async () => {
    const { model, calls } = counted([{ text: 'Half an answer and', chunk_size: 4, fault: { type: 'reset', after_chars: 8 } }]);
    const result = await call(wrap(model), 'streamed');
    expect(result.text).toBe('Half an ');
    expect((result.error as Error).message).toBe(
      "The model provider's answer broke off (terminated); the 8 characters it sent are kept as the partial result.",
    );
    expect(calls).toHaveLength(1);
  });

  it.each(modes)('does not retry an error that is not retryable (%s)', async (mode) => {
    const { model, calls } = counted([{ error: { status: 400, message: 'Bad request.' } }]);
    const result = await call(wrap(model), mode);
    expect((result.error as Error).message).toBe('Bad request.');
    expect(calls).toHaveLength(1);
  });

  it.each(modes)('honours retry-after up to 60 s with the injected clock (%s)', async (mode) => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
      now += ms;
    };
    const { model, calls } = counted((call) => (call === 1 ? { error: { status: 429, message: 'Slow down.', retry_after: 2 } } : { text: 'Fine now.' }));
    const result = await call(wrap(model, { nowMs: () => now, sleep }), mode);
    expect(result).toMatchObject({ text: 'Fine now.', error: undefined });
    expect(waits).toEqual([2000]);
    expect(calls).toHaveLength(2);
  });

  it.each(modes)('fails at once, saying when to retry, when retry-after is beyond 60 s (%s)', async (mode) => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const { model, calls } = counted([{ error: { status: 429, message: 'Quota exhausted.', retry_after: 120 } }]);
    const result = await call(wrap(model, { nowMs: () => now }), mode);
    expect((result.error as Error).message).toBe(
      'The model provider asks to retry after 120 s (at 2026-01-01T00:02:00.000Z), longer than cadre waits (60 s): retry after 2026-01-01T00:02:00.000Z.',
    );
    expect((result.error as ModelCallError).retryAt).toBe('2026-01-01T00:02:00.000Z');
    expect(calls).toHaveLength(1);
  });

  it('reads retry-after-ms and an HTTP date as well', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
      now += ms;
    };
    const { model } = counted((call) =>
      call === 1
        ? { error: { status: 429, message: 'a', retry_after_ms: 1500 } }
        : call === 2
          ? { error: { status: 503, message: 'b', retry_after: 'Thu, 01 Jan 2026 00:00:04 GMT' } }
          : { text: 'ok' },
    );
    const result = await call(wrap(model, { nowMs: () => now, sleep }), 'unstreamed');
    expect(result.text).toBe('ok');
    expect(waits).toEqual([1500, 2500]);
  });

  it('makes every request to a rate-limited provider wait for the announced time together', async () => {
    // A provider that refuses everything for 300 ms after it first refused.
    let blockedUntil: number | undefined;
    let requests = 0;
    const respond: RespondFunction = () => {
      requests++;
      const now = Date.now();
      if (blockedUntil === undefined) blockedUntil = now + 300;
      if (now < blockedUntil) return { error: { status: 429, message: 'Rate limited.', retry_after_ms: blockedUntil - now } };
      return { text: 'done' };
    };
    const gates = createProviderGates();
    const models = Array.from({ length: 5 }, () => reliableModel(scriptedLanguageModel(respond), { redactor, gates, retryDelayMs: 1 }));
    const first = call(models[0], 'unstreamed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const results = await Promise.all([first, ...models.slice(1).map((model) => call(model, 'unstreamed'))]);
    expect(results.map((result) => result.text)).toEqual(['done', 'done', 'done', 'done', 'done']);
    // One refused request, then one each: the four later runs never knocked while the gate was shut.
    expect(requests).toBe(6);
  });

  it('leaves no unhandled rejection behind when called with a signal that already aborted, and makes one attempt, not three', async () => {
    const attempts: string[] = [];
    const scripted = scriptedLanguageModel(() => ({ text: 'never' }));
    // Counts the attempts the wrapper makes on the provider's model.
    const counting = new Proxy(scripted, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'doGenerate' && property !== 'doStream') return value;
        return (...args: unknown[]) => {
          attempts.push(property);
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const reason = new Error('stopped before the call');
    const direct = wrap(counting) as unknown as { doGenerate(options: object): Promise<unknown>; doStream(options: object): Promise<unknown> };
    await expect(direct.doGenerate({ prompt: [], abortSignal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(direct.doStream({ prompt: [], abortSignal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(attempts).toEqual(['doGenerate', 'doStream']);
  });

  it('passes a caller abort through at once, without retrying', async () => {
    const { model, calls } = counted([{ fault: { type: 'hang' } }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stopped by a person')), 30);
    await expect(generateText({ model: wrap(model), prompt: 'x', maxRetries: 0, abortSignal: controller.signal })).rejects.toThrow('stopped by a person');
    expect(calls).toHaveLength(1);
  });
});

describe('reliableModel: secrets', () => {
  it.each(modes)('redacts a key the provider echoes in its error, with the error class kept (%s)', async (mode) => {
    const { model } = counted([{ error: { status: 401, message: `Incorrect API key provided: ${key}. Authorization: Bearer ${key}` } }]);
    const result = await call(wrap(model), mode);
    const error = result.error as Error & { responseBody?: string };
    expect(error.name).toBe('AI_APICallError');
    expect(error.message).not.toContain(key);
    expect(error.message).toContain('[redacted]');
    expect(error.responseBody).not.toContain(key);
    expect(JSON.stringify(error)).not.toContain(key);
  });

  it.each(modes)('redacts the key in model output and tool-call arguments, even split over chunks (%s)', async (mode) => {
    const { model } = counted([
      { text: `Here is the key ${key} for you.`, chunk_size: 3, tool_calls: [{ name: 'save', arguments: { note: `key=${key}`, n: 1 } }] },
    ]);
    const save = tool({ inputSchema: z.object({ note: z.string(), n: z.number() }) });
    const result = await call(wrap(model), mode, { save });
    expect(result.text).toBe('Here is the key [redacted] for you.');
    expect(result.toolInputs).toEqual([{ note: 'key=[redacted]', n: 1 }]);
  });
});

describe('reliableModel: one model stack', () => {
  it('hears a caller signal through one listener however many calls the model makes with it', async () => {
    const { model } = counted([{ text: 'Answer.' }]);
    const reliable = wrap(model);
    const caller = new AbortController();
    let listeners = 0;
    const add = caller.signal.addEventListener.bind(caller.signal);
    caller.signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      listeners++;
      add(...args);
    }) as AbortSignal['addEventListener'];
    for (let index = 0; index < 3; index++) await generateText({ model: reliable, prompt: 'hi', maxRetries: 0, abortSignal: caller.signal });
    expect(listeners).toBe(1);
  });

  it('passes on a word held back for redaction before the error of a stream that broke after it', async () => {
    const { model } = counted([{ text: 'Half an answer', chunk_size: 3, fault: { type: 'reset', after_chars: 6 } }]);
    const direct = wrap(model) as unknown as { doStream(options: object): Promise<{ stream: ReadableStream<{ type: string; delta?: string }> }> };
    const { stream } = await direct.doStream({ prompt: [] });
    const parts: string[] = [];
    for await (const part of stream) parts.push(part.type === 'text-delta' ? `text:${part.delta}` : part.type);
    expect(parts.filter((part) => part.startsWith('text:')).join('|')).toBe('text:Half |text:a');
    expect(parts.at(-1)).toBe('error');
  });

  it('is given once: a model that has the policy already is returned as it is', () => {
    const reliable = wrap(counted([{ text: 'x' }]).model);
    expect(reliableModel(reliable as never, { redactor })).toBe(reliable);
  });
});

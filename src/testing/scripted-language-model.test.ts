import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { APICallError, generateText, isStepCount, streamText, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Script, ScriptedRequest } from './script.ts';
import { scriptedLanguageModel } from './scripted-language-model.ts';
import { startScriptedServer, type ScriptedServer } from './scripted-server.ts';

const forecast = tool({
  description: 'The forecast for a city.',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

const script: Script = [
  {
    when: { system_includes: 'weather', has_tool: 'forecast' },
    turns: [
      {
        text: 'Looking.',
        tool_calls: [
          { name: 'forecast', arguments: { city: 'Paris' } },
          { name: 'forecast', arguments: { city: 'Oslo' } },
        ],
      },
      { text: 'Both sunny for {{task}}.', chunk_size: 5 },
    ],
  },
  { when: { last_user_includes: 'fail' }, turns: [{ error: { status: 503, message: 'Overloaded.' } }] },
  { turns: [{ text: 'Hello from the script.' }] },
];

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serverModel(): Promise<LanguageModelV4> {
  server = await startScriptedServer({ script });
  const provider = createOpenAICompatible({ name: 'scripted', baseURL: server.baseURL, apiKey: 'test', includeUsage: true });
  return provider('scripted');
}

const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

describe('scriptedLanguageModel', () => {
  it('streams text and reports usage', async () => {
    const result = streamText({ model: scriptedLanguageModel(script), prompt: 'hi' });
    expect(await result.text).toBe('Hello from the script.');
    expect(await result.usage).toMatchObject({ inputTokens: 1, outputTokens: 6 });
  });

  it('makes two tool calls in one turn, then answers after the tool ran', async () => {
    const result = await generateText({
      model: scriptedLanguageModel(script),
      system: 'You report the weather.',
      prompt: 'the trip',
      tools: { forecast },
      stopWhen: isStepCount(5),
    });
    expect(result.steps[0].toolResults.map((toolResult) => toolResult.output)).toEqual(['sunny in Paris', 'sunny in Oslo']);
    expect(result.text).toBe('Both sunny for the trip.');
  });

  it('throws a scripted error as an APICallError with its status', async () => {
    const error = await generateText({ model: scriptedLanguageModel(script), prompt: 'please fail', maxRetries: 0 }).catch((caught: unknown) => caught);
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 503, message: 'Overloaded.', isRetryable: true });
  });

  it('rejects with an AbortError as soon as a delay is aborted, leaving no timer behind', async () => {
    const before = timers();
    const model = scriptedLanguageModel([{ turns: [{ text: 'late', delay_ms: 20_000 }] }]);
    const controller = new AbortController();
    const pending = model.doGenerate({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], abortSignal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    expect(timers()).toBe(before + 1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(timers()).toBe(before);
  });

  it('ends a stream paused between chunks when aborted, leaving no timer behind', async () => {
    const before = timers();
    const model = scriptedLanguageModel([{ turns: [{ text: 'one two three', chunk_size: 4, chunk_delay_ms: 20_000 }] }]);
    const controller = new AbortController();
    const { stream } = await model.doStream({ prompt: [], abortSignal: controller.signal });
    const reader = stream.getReader();
    const types: string[] = [];
    for (let part = await reader.read(); part.value?.type !== 'text-delta'; part = await reader.read()) types.push(part.value!.type);
    expect(types).toEqual(['stream-start', 'response-metadata', 'text-start']);
    const next = reader.read();
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await expect(next).rejects.toMatchObject({ name: 'AbortError' });
    expect(timers()).toBe(before);
  });

  it('gives the respond function the request the server would record', async () => {
    const seen: ScriptedRequest[] = [];
    const model = scriptedLanguageModel((request) => {
      seen.push(request);
      return script[0].turns[request.turn];
    });
    const options = { system: 'You report the weather.', prompt: 'the trip', tools: { forecast }, stopWhen: isStepCount(5) };
    await generateText({ model, ...options });
    await generateText({ model: await serverModel(), ...options });
    // The server also records the wire a request came on; the in-process model has none.
    expect(seen).toEqual(server!.requests.map(({ wire, ...request }) => (expect(wire).toBe('chat-completions'), request)));
  });

  it('gives the same results as the server for the same script, streaming and not', async () => {
    const inProcess = scriptedLanguageModel(script);
    const overHttp = await serverModel();
    const summary = (steps: Awaited<ReturnType<typeof generateText>>['steps']) =>
      steps.map((step) => ({
        text: step.text,
        toolCalls: step.toolCalls.map(({ toolCallId, toolName, input }) => ({ toolCallId, toolName, input })),
        finishReason: step.finishReason,
        usage: { input: step.usage.inputTokens, output: step.usage.outputTokens },
      }));
    const options = { system: 'You report the weather.', prompt: 'the trip', tools: { forecast }, stopWhen: isStepCount(5) };
    const generated = await Promise.all([inProcess, overHttp].map(async (model) => summary((await generateText({ model, ...options })).steps)));
    expect(generated[0]).toEqual(generated[1]);
    expect(generated[0]).toHaveLength(2);
    const streamed = await Promise.all(
      [inProcess, overHttp].map(async (model) => {
        const result = streamText({ model, ...options });
        const deltas: string[] = [];
        for await (const part of result.fullStream) if (part.type === 'text-delta') deltas.push(part.text);
        return { deltas, steps: summary(await result.steps) };
      }),
    );
    expect(streamed[0]).toEqual(streamed[1]);
    expect(streamed[0].steps).toEqual(generated[0]);
  });

  it('answers many calls cheaply', async () => {
    const model = scriptedLanguageModel(script);
    const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }];
    const started = performance.now();
    for (let index = 0; index < 5_000; index++) {
      const { stream } = await model.doStream({ prompt });
      const reader = stream.getReader();
      while (!(await reader.read()).done);
    }
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

import { generateText, streamText, type LanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { scriptedLanguageModel } from '../testing/scripted-language-model.ts';
import { composeModel, compositionOf, type ModelMiddleware, type ModelObject } from './compose-model.ts';
import { watchModelText } from './watch-model-text.ts';
import { watchModelUsage } from './watch-model-usage.ts';

/** An entry that logs when a call enters and leaves it. */
function logging(name: string, log: string[]): ModelMiddleware {
  return {
    wrapGenerate: ({ doGenerate }) => {
      log.push(`${name} in`);
      return doGenerate().then((result) => {
        log.push(`${name} out`);
        return result;
      });
    },
    wrapStream: ({ doStream }) => {
      log.push(`${name} in`);
      return doStream().then((result) => {
        log.push(`${name} out`);
        return result;
      });
    },
  };
}

const scripted = () => scriptedLanguageModel(() => ({ text: 'Hello there.' }));
const asObject = (model: LanguageModel) => model as unknown as ModelObject;

describe('composeModel', () => {
  it('runs the first entry outermost, as wrapLanguageModel does, streamed or not', async () => {
    const log: string[] = [];
    const model = composeModel(scripted(), [logging('a', log), logging('b', log)]);
    await generateText({ model, prompt: 'hi' });
    expect(log).toEqual(['a in', 'b in', 'b out', 'a out']);
    log.length = 0;
    const result = streamText({ model, prompt: 'hi' });
    await result.consumeStream();
    expect(log).toEqual(['a in', 'b in', 'b out', 'a out']);
  });

  it('leaves the calls an entry does not wrap alone', async () => {
    const log: string[] = [];
    const { wrapStream } = logging('streams only', log);
    const model = composeModel(scripted(), [{ wrapStream }]);
    await generateText({ model, prompt: 'hi' });
    expect(log).toEqual([]);
    await streamText({ model, prompt: 'hi' }).consumeStream();
    expect(log).toEqual(['streams only in', 'streams only out']);
  });

  it('puts the entries of a second composition outside the first, on one stack over the same model', async () => {
    const log: string[] = [];
    const base = scripted();
    const first = composeModel(base, [logging('inner', log)]);
    const second = composeModel(first, [logging('outer', log)]);
    expect(compositionOf(second)?.base).toBe(base);
    expect(compositionOf(second)?.middleware).toHaveLength(2);
    await generateText({ model: second, prompt: 'hi' });
    expect(log).toEqual(['outer in', 'inner in', 'inner out', 'outer out']);
    // The first composition is left as it was.
    log.length = 0;
    await generateText({ model: first, prompt: 'hi' });
    expect(log).toEqual(['inner in', 'inner out']);
  });

  it("keeps the model's identity and leaves a model given by id, or no entry, alone", () => {
    const base = scripted();
    const composed = asObject(composeModel(base, [logging('a', [])]));
    expect([composed.specificationVersion, composed.provider, composed.modelId]).toEqual([base.specificationVersion, base.provider, base.modelId]);
    expect(composed.supportedUrls).toBe(base.supportedUrls);
    expect(composeModel('openai:gpt-5', [logging('a', [])])).toBe('openai:gpt-5');
    expect(composeModel(base, [])).toBe(base);
    expect(compositionOf(base)).toBeUndefined();
    expect(compositionOf(null)).toBeUndefined();
  });

  it('hands an entry the options after the transforms of the entries outside it', async () => {
    const seen: unknown[] = [];
    const base = scriptedLanguageModel(() => ({ text: 'ok' }));
    const model = composeModel(base, [
      { transformParams: async ({ params, type }) => ({ ...params, headers: { 'x-call': type } }) },
      {
        wrapGenerate: ({ doGenerate, params }) => {
          seen.push(params.headers);
          return doGenerate();
        },
        wrapStream: ({ doStream, params }) => {
          seen.push(params.headers);
          return doStream();
        },
      },
    ]);
    await generateText({ model, prompt: 'hi' });
    await streamText({ model, prompt: 'hi' }).consumeStream();
    expect(seen).toEqual([{ 'x-call': 'generate' }, { 'x-call': 'stream' }]);
  });

  it('lets an entry answer one kind of call with the other kind of the rest of the stack', async () => {
    const base = asObject(scriptedLanguageModel(() => ({ text: 'crossed' })));
    const crossed = asObject(
      composeModel(base as unknown as LanguageModel, [
        {
          // Each call kind is answered by the other one, as the SDK's simulateStreamingMiddleware does.
          wrapGenerate: ({ doStream }) => doStream().then(() => base.doGenerate({ prompt: [] })),
          wrapStream: ({ doGenerate }) => doGenerate().then(() => base.doStream({ prompt: [] })),
          transformParams: async ({ params }) => params,
        },
      ]),
    );
    expect((await crossed.doGenerate({ prompt: [] })).content[0]).toMatchObject({ type: 'text', text: 'crossed' });
    expect((await crossed.doStream({ prompt: [] })).stream).toBeInstanceOf(ReadableStream);
  });

  it('lets an entry call the rest of the stack again with other options', async () => {
    let calls = 0;
    const base = scriptedLanguageModel(() => {
      calls++;
      return calls === 1 ? { error: { status: 400, message: 'first fails' } } : { text: 'second works' };
    });
    const retryOnce: ModelMiddleware = { wrapGenerate: ({ model, params }) => model.doGenerate(params).then(undefined, () => model.doGenerate({ ...params })) };
    const result = await generateText({ model: composeModel(base, [retryOnce]), prompt: 'hi', maxRetries: 0 });
    expect(result.text).toBe('second works');
  });

  it('turns a model that throws instead of rejecting into a rejection', async () => {
    const failure = new Error('thrown at once');
    const base = {
      ...scripted(),
      doGenerate: () => {
        throw failure;
      },
      doStream: () => {
        throw failure;
      },
    };
    const model = asObject(composeModel(base as unknown as LanguageModel, [logging('a', [])]));
    await expect(model.doGenerate({})).rejects.toBe(failure);
    await expect(model.doStream({})).rejects.toBe(failure);
  });
});

describe('the watch entries', () => {
  it('tell the usage of each answer as soon as the model answered, streamed or not', async () => {
    const usages: unknown[] = [];
    const base = scriptedLanguageModel(() => ({ text: 'Counted.', usage: { input_tokens: 7, output_tokens: 3 } }));
    const model = composeModel(base, [watchModelUsage((usage) => usages.push(usage))]);
    await generateText({ model, prompt: 'hi' });
    await streamText({ model, prompt: 'hi' }).consumeStream();
    expect(usages).toEqual([
      { inputTokens: 7, outputTokens: 3 },
      { inputTokens: 7, outputTokens: 3 },
    ]);
  });

  it('tell the whole text of an unstreamed answer, and leave a streamed one alone', async () => {
    const texts: string[] = [];
    const model = composeModel(scripted(), [watchModelText((text) => texts.push(text))]);
    await generateText({ model, prompt: 'hi' });
    const streamed = streamText({ model, prompt: 'hi' });
    expect(await streamed.text).toBe('Hello there.');
    expect(texts).toEqual(['Hello there.']);
  });
});

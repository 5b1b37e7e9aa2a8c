import type { LanguageModel } from 'ai';

/** Token counts as any model specification version reports them (v2: numbers, v3+: `{ total }`). */
type ReportedTokens = number | { total?: number } | undefined;
interface ReportedUsage {
  inputTokens?: ReportedTokens;
  outputTokens?: ReportedTokens;
}

/** What {@link watchModelUsage} relies on in a model object of any specification version. */
interface ModelObject {
  specificationVersion: string;
  provider: string;
  modelId: string;
  supportedUrls: unknown;
  doGenerate(options: unknown): PromiseLike<{ usage?: ReportedUsage }>;
  doStream(options: unknown): PromiseLike<{ stream: ReadableStream<{ type: string; usage?: ReportedUsage }> }>;
}

function tokens(value: ReportedTokens): number {
  return typeof value === 'number' ? value : (value?.total ?? 0);
}

/**
 * The model, calling `onUsage` with the tokens of each response as soon as the model has
 * answered: before the tool calls of the step run, which may take long (a foreground delegation),
 * so a token budget counts the call at once. A model given by id is left alone.
 */
export function watchModelUsage(model: LanguageModel, onUsage: (usage: { inputTokens: number; outputTokens: number }) => void): LanguageModel {
  if (typeof model === 'string') return model;
  const inner = model as unknown as ModelObject;
  const report = (usage: ReportedUsage | undefined) => onUsage({ inputTokens: tokens(usage?.inputTokens), outputTokens: tokens(usage?.outputTokens) });
  const watched: ModelObject = {
    specificationVersion: inner.specificationVersion,
    provider: inner.provider,
    modelId: inner.modelId,
    get supportedUrls() {
      return inner.supportedUrls;
    },
    async doGenerate(callOptions) {
      const result = await inner.doGenerate(callOptions);
      report(result.usage);
      return result;
    },
    async doStream(callOptions) {
      const result = await inner.doStream(callOptions);
      const stream = result.stream.pipeThrough(
        new TransformStream({
          transform(part, controller) {
            if (part.type === 'finish') report(part.usage);
            controller.enqueue(part);
          },
        }),
      );
      return { ...result, stream };
    },
  };
  return watched as unknown as LanguageModel;
}

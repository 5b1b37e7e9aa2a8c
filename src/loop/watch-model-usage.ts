import type { LanguageModel } from 'ai';
import { forwardModel, type ModelObject } from '../util/forward-model.ts';

/** Token counts as any model specification version reports them (v2: numbers, v3+: `{ total }`). */
type ReportedTokens = number | { total?: number } | undefined;
interface ReportedUsage {
  inputTokens?: ReportedTokens;
  outputTokens?: ReportedTokens;
}

/** What {@link watchModelUsage} reads of a model's answers. */
type UsageModel = ModelObject<{ usage?: ReportedUsage }, { stream: ReadableStream<{ type: string; usage?: ReportedUsage }> }>;

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
  const inner = model as unknown as UsageModel;
  const report = (usage: ReportedUsage | undefined) => onUsage({ inputTokens: tokens(usage?.inputTokens), outputTokens: tokens(usage?.outputTokens) });
  const watched = forwardModel(inner, {
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
  });
  return watched as unknown as LanguageModel;
}

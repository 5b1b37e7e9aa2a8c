import type { ModelMiddleware, StreamPart } from './compose-model.ts';
import { pipeParts } from './pipe-parts.ts';

/** Token counts as any model specification version reports them (v2: numbers, v3+: `{ total }`). */
type ReportedTokens = number | { total?: number } | undefined;
interface ReportedUsage {
  inputTokens?: ReportedTokens;
  outputTokens?: ReportedTokens;
}

function tokens(value: ReportedTokens): number {
  return typeof value === 'number' ? value : (value?.total ?? 0);
}

/**
 * The model stack's usage entry: calls `onUsage` with the tokens of each response as soon as the
 * model has answered, before the tool calls of the step run, which may take long (a foreground
 * delegation), so a token budget counts the call at once.
 * @example composeModel(model, [watchModelUsage((usage) => budget.add(usage))])
 */
export function watchModelUsage(onUsage: (usage: { inputTokens: number; outputTokens: number }) => void): ModelMiddleware {
  const report = (usage: ReportedUsage | undefined) => onUsage({ inputTokens: tokens(usage?.inputTokens), outputTokens: tokens(usage?.outputTokens) });
  return {
    wrapGenerate: ({ doGenerate }) =>
      doGenerate().then((result) => {
        report(result.usage as ReportedUsage | undefined);
        return result;
      }),
    wrapStream: ({ doStream }) =>
      doStream().then((result) => ({
        ...result,
        stream: pipeParts(result.stream, {
          transform(part: StreamPart, sink) {
            if (part.type === 'finish') report(part.usage as ReportedUsage | undefined);
            sink.enqueue(part);
          },
        }),
      })),
  };
}

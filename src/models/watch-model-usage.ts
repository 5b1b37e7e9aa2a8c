import type { ModelMiddleware, StreamPart } from './compose-model.ts';
import { pipeParts } from './pipe-parts.ts';

/** Token counts as any model specification version reports them (v2: numbers, v3+: `{ total, cacheRead, cacheWrite }`). */
type ReportedTokens = number | { total?: number; cacheRead?: number; cacheWrite?: number } | undefined;
interface ReportedUsage {
  inputTokens?: ReportedTokens;
  outputTokens?: ReportedTokens;
  /** v2's tokens read from the prompt cache. */
  cachedInputTokens?: number;
}

/** What the usage entry tells: every input token (cached ones included), and the cache counts when reported. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

function tokens(value: ReportedTokens): number {
  return typeof value === 'number' ? value : (value?.total ?? 0);
}

function usageOf(usage: ReportedUsage | undefined): ModelUsage {
  const reported: ModelUsage = { inputTokens: tokens(usage?.inputTokens), outputTokens: tokens(usage?.outputTokens) };
  const input = usage?.inputTokens;
  const cacheRead = typeof input === 'object' ? input.cacheRead : usage?.cachedInputTokens;
  const cacheWrite = typeof input === 'object' ? input.cacheWrite : undefined;
  if (cacheRead) reported.cacheReadTokens = cacheRead;
  if (cacheWrite) reported.cacheWriteTokens = cacheWrite;
  return reported;
}

/**
 * The model stack's usage entry: calls `onUsage` with the tokens of each response as soon as the
 * model has answered, before the tool calls of the step run, which may take long (a foreground
 * delegation), so a token budget counts the call at once.
 * @example composeModel(model, [watchModelUsage((usage) => budget.add(usage))])
 */
export function watchModelUsage(onUsage: (usage: ModelUsage) => void): ModelMiddleware {
  const report = (usage: ReportedUsage | undefined) => onUsage(usageOf(usage));
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

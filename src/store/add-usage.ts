import type { Usage } from './records.ts';

/**
 * Adds `more` to `total` in place: the cache counts appear on `total` once some were reported,
 * so a usage without them stays as it was (providers that report none).
 * @example addUsage(session, run.usage)
 */
export function addUsage(total: Usage, more: Usage): Usage {
  total.input_tokens += more.input_tokens;
  total.output_tokens += more.output_tokens;
  if (more.cache_read_tokens) total.cache_read_tokens = (total.cache_read_tokens ?? 0) + more.cache_read_tokens;
  if (more.cache_write_tokens) total.cache_write_tokens = (total.cache_write_tokens ?? 0) + more.cache_write_tokens;
  return total;
}

/** Token counts as cadre's loop reports them (`LoopUsage`): camel case, the cache counts when the provider reported them. */
export interface ReportedUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/** A loop's token counts as a record's usage: the cache counts only when some were reported. */
export function usageOf(reported: ReportedUsage): Usage {
  const usage: Usage = { input_tokens: reported.inputTokens, output_tokens: reported.outputTokens };
  if (reported.cacheReadTokens) usage.cache_read_tokens = reported.cacheReadTokens;
  if (reported.cacheWriteTokens) usage.cache_write_tokens = reported.cacheWriteTokens;
  return usage;
}

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

import type { Usage } from '../store/records.ts';

/**
 * What a usage says of the prompt cache, for lines that show tokens: `, of which 900 read from
 * the prompt cache and 100 written to it`, or '' when the provider reported none.
 * @example `${usage.input_tokens} in${cacheTokensText(usage)}`
 */
export function cacheTokensText(usage: Usage, format: (count: number) => string = String): string {
  const read = usage.cache_read_tokens ?? 0;
  const written = usage.cache_write_tokens ?? 0;
  if (read === 0 && written === 0) return '';
  const parts = [...(read > 0 ? [`${format(read)} read from the prompt cache`] : []), ...(written > 0 ? [`${format(written)} written to it`] : [])];
  if (read === 0) parts[0] = `${format(written)} written to the prompt cache`;
  return ` (cache: ${parts.join(', ')})`;
}

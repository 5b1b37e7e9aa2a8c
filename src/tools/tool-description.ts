import { readFileSync } from 'node:fs';

const cache = new Map<string, string>();

/**
 * The long description of a workspace tool, kept in a sibling `.txt` file, with `{name}`
 * placeholders filled from `values` (the tool's caps, so the model reads the real numbers).
 * @example toolDescription('grep.txt', { maxMatches: 200 })
 */
export function toolDescription(fileName: string, values: Record<string, string | number> = {}): string {
  let text = cache.get(fileName);
  if (text === undefined) {
    text = readFileSync(new URL(`./${fileName}`, import.meta.url), 'utf8').trim();
    cache.set(fileName, text);
  }
  return text.replace(/\{(\w+)\}/g, (whole, key: string) => (key in values ? String(values[key]) : whole));
}

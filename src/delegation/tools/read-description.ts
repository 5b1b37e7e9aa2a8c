import { readFileSync } from 'node:fs';

const cache = new Map<string, string>();

/** The long description of a tool, kept in a sibling `.txt` file. */
export function readDescription(fileName: string): string {
  let text = cache.get(fileName);
  if (text === undefined) {
    text = readFileSync(new URL(`./${fileName}`, import.meta.url), 'utf8').trim();
    cache.set(fileName, text);
  }
  return text;
}

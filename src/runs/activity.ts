import { oneLine } from '../store/markdown-text.ts';
import type { RunRecord } from '../store/records.ts';

/** The longest an activity line may be. */
export const maxActivityLength = 80;

/** Collapses white space and cuts a line to `maxActivityLength` characters with an ellipsis. */
export function clampActivity(text: string, max = maxActivityLength): string {
  // Only the start can show; a long result need not be rewritten whole.
  const line = oneLine(text.length > max * 8 ? text.trimStart().slice(0, max * 8) : text);
  if (line.length <= max) return line;
  const cut = line.slice(0, max - 1);
  // Never half a surrogate pair: a high surrogate cut off from its partner goes too.
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

const mainArgumentKeys = ['path', 'file', 'file_path', 'pattern', 'query', 'command', 'url', 'agent', 'run_id', 'description', 'task'];

/** `read_file src/a.ts`, `grep TODO in src`: the tool and its main argument (a search shows its pattern first). */
export function describeToolCall(tool: string, input: unknown): string {
  if (input && typeof input === 'object') {
    const record = input as Record<string, unknown>;
    const { pattern, path } = record;
    if (typeof pattern === 'string' && pattern.trim() !== '') {
      return clampActivity(typeof path === 'string' && path.trim() !== '' && path !== '.' ? `${tool} ${pattern} in ${path}` : `${tool} ${pattern}`);
    }
    for (const key of mainArgumentKeys) {
      const value = record[key];
      if (typeof value === 'string' && value.trim() !== '') return clampActivity(`${tool} ${value}`);
    }
    const first = Object.values(record).find((value) => typeof value === 'string' || typeof value === 'number');
    if (first !== undefined) return clampActivity(`${tool} ${String(first)}`);
  }
  return clampActivity(tool);
}

/** The last sentence of streamed text: what a person wants to glance at. */
export function lastSentence(text: string): string {
  const trimmed = oneLine(text);
  if (trimmed === '') return '';
  // Sentences end at '.', '!' or '?' followed by white space (one space, once on one line).
  const end = sentenceBoundaryBefore(trimmed, trimmed.length);
  let candidate = trimmed.slice(end + 1);
  // A sentence still being streamed may be a fragment: keep the previous one with it when short.
  if (candidate.length < 12 && end >= 0) candidate = trimmed.slice(sentenceBoundaryBefore(trimmed, end) + 1);
  if (candidate.length > maxActivityLength) {
    // Keep the end, starting at a whole word when one begins close enough.
    const start = candidate.length - (maxActivityLength - 1);
    const tail = candidate.slice(start);
    const space = candidate[start - 1] === ' ' ? -1 : tail.indexOf(' ');
    candidate = `…${space >= 0 && space < 20 ? tail.slice(space + 1) : tail}`;
  }
  return clampActivity(candidate);
}

/** The index of the last space before `before` that follows a sentence's end mark, or -1. */
function sentenceBoundaryBefore(text: string, before: number): number {
  for (let index = before - 1; index > 0; index--) {
    if (text.charCodeAt(index) !== 32) continue;
    const mark = text.charCodeAt(index - 1);
    if (mark === 46 || mark === 33 || mark === 63) return index;
  }
  return -1;
}

/** The activity of a finished run: its status and the start of its result or error. */
export function finalActivity(run: Pick<RunRecord, 'status' | 'result' | 'error' | 'partial_result'>): string {
  const detail = run.result?.text ?? run.error?.message ?? run.partial_result ?? '';
  return clampActivity(detail.trim() === '' ? run.status : `${run.status}: ${detail}`);
}

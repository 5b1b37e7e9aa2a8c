import { oneLine } from '../store/markdown-text.ts';
import type { RunRecord } from '../store/records.ts';
import { clampActivity, maxActivityLength, renderActivity, type RunActivity } from '../store/run-activity.ts';

export {
  activityEventData,
  activityOfEventData,
  clampActivity,
  maxActivityLength,
  renderActivity,
  type ActivityEventData,
  type RunActivity,
  type RunActivityKind,
} from '../store/run-activity.ts';

const mainArgumentKeys = ['path', 'file', 'file_path', 'pattern', 'query', 'command', 'url', 'agent', 'run_id', 'description', 'task'];

/** A tool call as activity: the tool and its main argument (a search shows its pattern first). */
export function toolActivity(tool: string, input: unknown): Extract<RunActivity, { kind: 'tool' }> {
  const argument = mainArgument(input);
  return argument === undefined ? { kind: 'tool', tool } : { kind: 'tool', tool, argument: clampActivity(argument) };
}

/** `read_file src/a.ts`, `grep TODO in src`: the text of {@link toolActivity}. */
export function describeToolCall(tool: string, input: unknown): string {
  return renderActivity(toolActivity(tool, input));
}

function mainArgument(input: unknown): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const record = input as Record<string, unknown>;
  const { pattern, path } = record;
  if (typeof pattern === 'string' && pattern.trim() !== '') {
    return typeof path === 'string' && path.trim() !== '' && path !== '.' ? `${pattern} in ${path}` : pattern;
  }
  for (const key of mainArgumentKeys) {
    const value = record[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  const first = Object.values(record).find((value) => typeof value === 'string' || typeof value === 'number');
  return first === undefined ? undefined : String(first);
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
export function finalActivity(run: Pick<RunRecord, 'status' | 'result' | 'error' | 'partial_result'>): RunActivity {
  // A value (output_schema) as compact JSON: its indented text would show little on one line.
  const value = run.result?.value === undefined ? undefined : `json ${JSON.stringify(run.result.value).slice(0, 200)}`;
  const detail = value ?? run.result?.text ?? run.error?.message ?? run.partial_result ?? '';
  // Only what the line can show is kept.
  return detail.trim() === '' ? { kind: 'finished', status: run.status } : { kind: 'finished', status: run.status, detail: clampActivity(detail) };
}

import { generateText, type LanguageModel } from 'ai';
import type { Usage } from '../store/records.ts';

/** Settings of result summaries (`summarize` in the configuration, docs/runs-and-limits.md). */
export interface SummarizeSettings {
  /** Whether results longer than `limits.maxResultChars` are summarized. @default false */
  enabled?: boolean;
  /** The model spec that summarizes. @default the parent's model (the run's own when the parent is not cadre's loop) */
  model?: string;
  /** The longest summary, in characters. @default 4000 */
  maxChars?: number;
  /** How long a summary may take before head/tail truncation is used instead. @default 60000 */
  timeoutMs?: number;
}

/** A summary made, or why none was. */
export type SummaryOutcome = { ok: true; summary: string; usage: Usage } | { ok: false; reason: string; usage: Usage };

/** Options of {@link summarizeResult}. */
export interface SummarizeResultOptions {
  model: LanguageModel;
  /** The task the subagent was given, so the summary keeps what answers it. */
  task: string;
  /** @default 4000 */
  maxChars?: number;
  /** @default 60000 */
  timeoutMs?: number;
  /** A stop of the run ends the summary too. */
  signal?: AbortSignal;
}

/** What the summarizing model is told; `{maxChars}` is the limit. */
const instructions = [
  'You condense the result a subagent returned, for the agent that delegated the task to it.',
  'Write at most {maxChars} characters. Keep what answers the task: findings, conclusions, decisions,',
  'names, file paths, numbers, commands, errors and open questions. Drop repetition and narration.',
  'Write the summary only, in the language of the result, without a preamble.',
].join(' ');

/**
 * Summarizes a subagent's long result for its parent with one model call, within `maxChars`
 * characters. Never throws: a failed, empty or late summary comes back as `ok: false` with the
 * reason (the caller then cuts the text head and tail instead).
 *
 * @example await summarizeResult(longText, { model, task: 'Survey the repository', maxChars: 4000 })
 */
export async function summarizeResult(
  text: string,
  { model, task, maxChars = 4000, timeoutMs = 60_000, signal }: SummarizeResultOptions,
): Promise<SummaryOutcome> {
  const usage: Usage = { input_tokens: 0, output_tokens: 0 };
  const timeout = AbortSignal.timeout(timeoutMs);
  const abortSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    const result = await generateText({
      model,
      instructions: instructions.replaceAll('{maxChars}', String(maxChars)),
      messages: [{ role: 'user', content: `## Task the subagent was given\n\n${task}\n\n## The subagent's result (${text.length} characters)\n\n${text}` }],
      abortSignal,
      maxRetries: 0,
    });
    usage.input_tokens = result.usage.inputTokens ?? 0;
    usage.output_tokens = result.usage.outputTokens ?? 0;
    const { cacheReadTokens, cacheWriteTokens } = result.usage.inputTokenDetails ?? {};
    if (cacheReadTokens) usage.cache_read_tokens = cacheReadTokens;
    if (cacheWriteTokens) usage.cache_write_tokens = cacheWriteTokens;
    const summary = result.text.trim();
    if (summary === '') return { ok: false, reason: 'the summary came back empty', usage };
    return { ok: true, summary: summary.length <= maxChars ? summary : cutSummary(summary, maxChars), usage };
  } catch (error) {
    if (timeout.aborted && !signal?.aborted) return { ok: false, reason: `the summary took longer than ${formatSeconds(timeoutMs)}`, usage };
    if (signal?.aborted) return { ok: false, reason: 'the run was stopped while summarizing', usage };
    return { ok: false, reason: `the summary failed: ${shortReason(error)}`, usage };
  }
}

/** A summary the model made too long, cut at white space (never inside a surrogate pair) to fit. */
function cutSummary(summary: string, maxChars: number): string {
  const marker = ' …';
  let end = maxChars - marker.length;
  const space = summary.lastIndexOf(' ', end);
  if (space > end * 0.8) end = space;
  const code = summary.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${summary.slice(0, end).trimEnd()}${marker}`;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function shortReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 197)}...` : line || 'unknown error';
}

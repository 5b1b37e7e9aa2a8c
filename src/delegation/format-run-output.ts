import type { RunRecord, RunWorktree } from '../store/records.ts';
import { worktreeLine } from '../worktrees/worktree-records.ts';
import { truncateResult } from './truncate-result.ts';

/** Options for {@link formatRunOutput}. */
export interface FormatRunOutputOptions {
  /** @default 8000 */
  maxResultChars?: number;
  /** A note for the model: what to do next. */
  note?: string;
  /** Replaces the body (for example the progress of an unfinished run). */
  body?: string;
}

/**
 * The text a model gets about a run, always in the pinned shape (docs/runs-and-limits.md) and never
 * empty: header lines, a blank line, then the result, the partial result, or a sentence saying
 * there is none.
 */
export function formatRunOutput(run: RunRecord, { maxResultChars = 8000, note, body }: FormatRunOutputOptions = {}): string {
  const lines = [`run_id: ${run.id}`, `agent: ${run.agent}`, `status: ${run.status}`];
  const notes: string[] = [];
  if (run.status === 'failed' && run.error) lines.push(`error: ${run.error.kind}: ${run.error.message}`);
  if (run.worktree?.commit) lines.push(worktreeLine(run.worktree));
  let text = body ?? describeOutcome(run);
  if (run.result?.value !== undefined) lines.push('output: json');
  if (body === undefined && run.result?.value !== undefined) {
    // A value is never cut in the middle: whole, or its keys and how to page its JSON.
    const json = run.result.text;
    if (json.length > maxResultChars) {
      lines.push(`truncated: ${json.length} characters, ${json.length} omitted`);
      notes.push(`The value is longer than ${maxResultChars} characters; page through its JSON with agent_output (run_id: ${run.id}, offset, limit).`);
      text = describeValueKeys(run.result.value, json.length);
    } else text = json;
  } else if (body === undefined && run.result?.summarized && run.result.summary) {
    lines.push(`summarized: ${run.result.original_length} characters`);
    notes.push(`This is a summary; page through the full result with agent_output (run_id: ${run.id}, offset, limit).`);
    text = run.result.summary;
  } else if (body === undefined && run.result) {
    const cut = truncateResult(run.result.text, { maxChars: maxResultChars });
    if (cut.truncated) {
      lines.push(`truncated: ${cut.originalLength} characters, ${cut.omitted} omitted`);
      if (run.result.summary_error) notes.push(`No summary: ${run.result.summary_error}; showing the head and tail instead.`);
      notes.push(`Page through the full result with agent_output (run_id: ${run.id}, offset, limit).`);
    }
    text = cut.text;
  } else if (body === undefined && run.partial_result && run.partial_result.trim() !== '') {
    const cut = truncateResult(run.partial_result, { maxChars: maxResultChars });
    if (cut.truncated) {
      lines.push(`truncated: ${cut.originalLength} characters, ${cut.omitted} omitted`);
      notes.push(`Page through the full partial result with agent_output (run_id: ${run.id}, offset, limit).`);
    }
    text = `Partial result (the run did not finish):\n${cut.text}`;
  }
  if (run.worktree) notes.push(worktreeNote(run, run.worktree));
  if (note) notes.unshift(note);
  if (notes.length > 0) lines.push(`note: ${notes.join(' ')}`);
  return `${lines.join('\n')}\n\n${text}`;
}

/** Where an isolated run works, and what it does not see; for a follow-up, whose worktree it went on in. */
function worktreeNote(run: RunRecord, worktree: RunWorktree): string {
  const follows =
    run.resumed_from === null
      ? ''
      : run.warnings.some((warning) => warning.kind === 'worktree_fresh')
        ? `The worktree of the run it follows (${run.resumed_from}) was merged or removed, so it works in a fresh one made from that branch's tip. `
        : worktree.branch !== `cadre/${run.id}`
          ? `It goes on in the worktree of the run it follows (${run.resumed_from}). `
          : '';
  if (worktree.commit)
    return `${follows}Its changes are committed on branch ${worktree.branch} (made from ${worktree.base.slice(0, 12)}; uncommitted changes of the workspace were not in it); a person merges them with cadre worktree merge.`;
  return `${follows}It works in its own git worktree on branch ${worktree.branch} (from ${worktree.base.slice(0, 12)}); uncommitted changes of the workspace are not in it.`;
}

/** The top-level keys of a value too long to show, each with its kind and size. */
function describeValueKeys(value: Record<string, unknown>, length: number): string {
  const keys = Object.entries(value).map(([key, entry]) => `- ${key}: ${describeEntry(entry)}`);
  return [`A JSON object of ${length} characters, too long to show whole. Its top-level keys:`, ...keys].join('\n');
}

function describeEntry(entry: unknown): string {
  const size = (JSON.stringify(entry) ?? '').length;
  if (Array.isArray(entry)) return `array of ${entry.length} item${entry.length === 1 ? '' : 's'} (${size} characters)`;
  if (entry === null) return 'null';
  if (typeof entry === 'object') return `object of ${Object.keys(entry).length} key${Object.keys(entry).length === 1 ? '' : 's'} (${size} characters)`;
  if (typeof entry === 'string') return `string (${entry.length} characters)`;
  return `${typeof entry} ${size <= 40 ? JSON.stringify(entry) : ''}`.trimEnd();
}

function describeOutcome(run: RunRecord): string {
  switch (run.status) {
    case 'completed_empty':
      return 'The subagent finished without a final answer (its last message was empty).';
    case 'failed':
      return 'The subagent failed before it produced a result.';
    case 'canceled_by_user':
      return 'A person stopped this run before it produced any text.';
    case 'canceled_by_parent':
      return 'This run was stopped before it produced any text.';
    case 'abandoned':
      return 'The process running this subagent died and the run could not be resumed; no result was kept.';
    case 'queued':
      return 'The run is waiting for a slot.';
    case 'running':
      return 'The run is still working.';
    default:
      return 'The subagent returned no text.';
  }
}

/** The body for a run that has not finished yet: waiting for a person, for a slot, or working. */
export function progressBody(run: RunRecord): string {
  if (run.status === 'queued' && run.activity?.kind === 'awaiting_approval')
    return `The run waits for a person's approval (${run.last_activity}); it starts once approved, and ends failed / denied if refused.`;
  return `The run is ${run.status === 'queued' ? 'waiting for a slot' : 'working'}.`;
}

/** The section of a delegation the rules denied: no run was made. */
export function deniedOutput(agent: string, message: string): string {
  return `agent: ${agent}\nstatus: denied (no run was started)\n\n${message}`;
}

import type { RunRecord, RunStatus } from '../store/records.ts';
import type { ExecutionOutcome } from './run-executor.ts';
import { stoppedStatus, type StopCause } from './run-stop.ts';

/** What the run manager knows of a run's execution besides the executor's outcome. */
export interface RunEndFacts {
  /** Who stopped the run, if anyone did. */
  stopCause?: StopCause;
  /** Whether `runTimeoutMs` ran out. */
  timedOut?: boolean;
  runTimeoutMs?: number;
  /** The run's turn cap. */
  maxTurns: number;
  /** Results longer than this reach the parent cut (unless summarized). */
  maxResultChars: number;
}

/** The state a run ends in, and what is written with the move (every field the line shows). */
export interface RunEnd {
  status: RunStatus;
  /** The fields written with the move; those left out keep their stored value. */
  patch: Partial<Pick<RunRecord, 'result' | 'error' | 'partial_result'>>;
}

/**
 * The end of a run whose execution is over, beside the ledger's legal moves: a stop wins, then a
 * run its executor could not carry on (`abandoned`), the run's timeout, an error, a final text
 * (`completed`, cut or summarized for the parent), a structured value (`completed`, never summarized), all turns spent on tool calls (`max_turns`),
 * and otherwise `completed_empty`. Whatever text came before an unfinished end is kept as the
 * partial result.
 */
export function decideRunEnd(outcome: ExecutionOutcome, facts: RunEndFacts): RunEnd {
  const partial = outcome.lastText.trim() === '' ? null : outcome.lastText;
  const unfinished = (status: RunStatus, error?: RunRecord['error']): RunEnd => ({
    status,
    patch: error === undefined ? { partial_result: partial } : { partial_result: partial, error },
  });
  if (facts.stopCause) return unfinished(stoppedStatus(facts.stopCause));
  if (outcome.abandoned !== undefined) return unfinished('abandoned', null);
  if (facts.timedOut) return unfinished('failed', { kind: 'timeout', message: `The run took longer than ${facts.runTimeoutMs} ms.` });
  if (outcome.error) return unfinished('failed', outcome.error);
  // A structured value is never summarized, and never `completed_empty`.
  if (outcome.value !== undefined) {
    const text = outcome.text;
    return {
      status: 'completed',
      patch: { result: { text, truncated: text.length > facts.maxResultChars, original_length: text.length, value: outcome.value } },
    };
  }
  if (outcome.text.trim() !== '') {
    const text = outcome.text;
    const summarized = outcome.summary?.summary != null;
    const summary = outcome.summary ? { summarized, summary: outcome.summary.summary, summary_error: outcome.summary.error } : {};
    return {
      status: 'completed',
      patch: { result: { text, truncated: !summarized && text.length > facts.maxResultChars, original_length: text.length, ...summary } },
    };
  }
  if (outcome.finishReason === 'tool-calls' && outcome.steps >= facts.maxTurns) {
    return unfinished('failed', { kind: 'max_turns', message: `The subagent used all ${facts.maxTurns} turns without a final answer.` });
  }
  return unfinished('completed_empty');
}

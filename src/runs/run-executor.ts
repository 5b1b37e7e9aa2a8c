import type { RunErrorKind, RunRecord } from '../store/records.ts';

/** How a run's work ended, as the executor that carried it out reports it. */
export interface ExecutionOutcome {
  text: string;
  lastText: string;
  finishReason: string;
  steps: number;
  error?: { kind: Extract<RunErrorKind, 'model_error' | 'execution_error' | 'budget_exceeded' | 'invalid_output' | 'max_turns'>; message: string };
  /**
   * The value a run with an `output_schema` gave, as the schema accepted it; `text` is then its
   * JSON. Absent for runs without a schema.
   */
  value?: Record<string, unknown>;
  /** A summary of the text for the parent (`summarize.enabled`), or why it failed; absent when none was tried. */
  summary?: { summary: string | null; error: string | null };
  /**
   * Set when the run could not go on where it executed (its worker died and no other worker could
   * resume it): the run ends `abandoned`, and this says why.
   */
  abandoned?: string;
}

/**
 * The seam where a run's work is carried out: in this process (`createInProcessExecutor`, the
 * subagent's loop), on a queue's workers (`cadre/bullmq`), or by another agent program. The run
 * manager moves the run to `running` before and decides its end from the outcome after
 * ({@link decideRunEnd}); the executor stores the run's steps, events and activity while it works
 * (`createRunRecorder` does that for any executor that sees steps), and resolves once nothing more
 * will be written for the run. It ends its work when `signal` aborts.
 */
export interface RunExecutor {
  execute(run: RunRecord, signal: AbortSignal): Promise<ExecutionOutcome>;
}

/** An outcome for work that failed before or outside the loop (a setup that threw). */
export function failedOutcome(error: unknown, steps = 0): ExecutionOutcome {
  return { text: '', lastText: '', finishReason: 'error', steps, error: { kind: 'execution_error', message: shortMessage(error) } };
}

/** A short, stack-free message for models and records. */
export function shortMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = message.split('\n')[0].trim();
  return firstLine.length > 300 ? `${firstLine.slice(0, 297)}...` : firstLine || 'Unknown error';
}

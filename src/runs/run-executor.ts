import type { RunErrorKind, RunRecord } from '../store/records.ts';
import type { DeliveredMessage } from './run-inbox.ts';

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
  /**
   * Carries the run out until it ends or `signal` aborts, where `context.place` says, taking what
   * its parent or a person sent it meanwhile from `context.messages` (an executor that cannot take
   * them leaves them stored, for the next).
   */
  execute(run: RunRecord, signal: AbortSignal, context?: ExecutionContext): Promise<ExecutionOutcome>;
}

/** What the executor seam hands to whatever carries a run out, besides the run and its signal. */
export interface ExecutionContext {
  /** Where the run works. @default the workspace */
  place?: RunPlace;
  /** The messages sent to the run while it executes. @default none taken (they wait stored) */
  messages?: RunMessageFeed;
}

/**
 * Where a run works, handed by the executor seam to whatever carries the run out (its tools, its
 * sandbox, a harness program's working directory).
 */
export interface RunPlace {
  /**
   * The run's working directory: its own git worktree (`isolation: worktree`, docs/worktrees.md).
   * @default the workspace
   */
  cwd?: string;
  /** Folders a command of the run may write besides `cwd`: its worktree's git folder, the objects, its branch's ref. @default none */
  writable?: readonly string[];
  /** Folders a command of the run must see read-only wherever they are (its repository's git folder). @default none */
  readable?: readonly string[];
}

/**
 * The messages sent to a run while it executes (docs/talking-to-runs.md), as its loop takes them
 * before each model call.
 */
export interface RunMessageFeed {
  /** Whether messages may wait: one arrived (or waited when the execution started) since they were last taken. Cheap. */
  waiting(): boolean;
  /**
   * Delivers what waits, in the order sent: each message is appended to the child session's
   * transcript in the commit that marks it delivered. Resolves them, their texts as the subagent reads them.
   */
  take(): Promise<DeliveredMessage[]>;
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

import type { CadreEvent } from '../runs/run-bus.ts';
import type { AutoResumeStop } from '../sessions/auto-resume.ts';

/** How `cadre run` ended. */
export interface RunOutcome {
  sessionId: string;
  /** `completed`, `failed` (the primary agent failed), or `canceled` (a person stopped it). */
  status: 'completed' | 'failed' | 'canceled';
  /** The primary agent's final answer: the last assistant text of this invocation. */
  text: string;
  /**
   * Every answer of the primary agent in this invocation, oldest first: the text of each of its
   * messages that has any (later turns after an auto-resume included), with the message's `seq`.
   * @default the final answer alone
   */
  answers?: ReadonlyArray<{ seq: number; text: string }>;
  /** The primary agent's error, when it failed. */
  error?: string;
  /** Set when the session stopped resuming on its own (`limits.maxAutoResumes`) with notifications waiting. */
  autoResumeStop?: AutoResumeStop;
  /** `--db <path>` when the database is not the default one, for the hints printed at the end. */
  databaseFlag?: string;
  /** How the person runs cadre again, `cadre` or `npx cadre`, for those hints. @default 'cadre' */
  command?: string;
}

/** What `cadre run` shows while it works: JSON Lines, plain lines, or a live view. */
export interface RunView {
  /** A live event of the runtime. */
  event(event: CadreEvent): void;
  /** A message for the person, such as "Stopping...". */
  notice(text: string): void;
  /**
   * Stops redrawing and clears what the view drew, so a prompt can use the terminal; the returned
   * function draws again. Views that only append lines need not have it.
   */
  pause?(): () => void;
  /** Shows the outcome; the view writes nothing after it. */
  finish(outcome: RunOutcome): void;
}

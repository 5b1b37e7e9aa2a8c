import { addPruning } from '../util/pruned-set.ts';

/** Options of {@link createAutoResume}. */
export interface AutoResumeOptions {
  /** Runs a turn on what the session holds (the session runner's `resume`). */
  resume: (sessionId: string) => Promise<unknown>;
  /** Whether something else keeps the session busy here (a turn, a run, a notification under way). */
  isBusy: (sessionId: string) => boolean;
  /**
   * How long an idle session waits before it wakes, to gather notifications that arrive
   * together. @default 250
   */
  delayMs?: number;
  onError: (error: unknown) => void;
}

/**
 * The primary sessions this process serves, and their auto-resume: an idle one wakes up on its
 * own a moment after a notification reached it (a busy one picks notifications up before its next
 * model call, or right after its turn). Only hosted sessions auto-resume here. Sessions with
 * nothing going on are pruned as the set grows, so a long-lived `cadre serve` does not keep every
 * session it ever served; sending to one, or recovering its runs, hosts it again.
 */
export interface AutoResume {
  /** Serves the session from this process. */
  host(sessionId: string): void;
  /** The sessions served now. */
  hosted(): Iterable<string>;
  /** Whether this process serves the session. */
  isHosted(sessionId: string): boolean;
  /** Wakes a hosted session after the delay, unless a wake is pending already. */
  schedule(sessionId: string): void;
  /** Whether nothing goes on in the session here: no turn, run, notification or wake pending. */
  isQuiet(sessionId: string): boolean;
  /** Cancels every pending wake (the runtime closes). */
  cancel(): void;
}

/** Creates the {@link AutoResume} of a runtime. */
export function createAutoResume(options: AutoResumeOptions): AutoResume {
  const { delayMs = 250 } = options;
  const hosted = new Set<string>();
  const pruning = { threshold: 1024, minimum: 1024 };
  const timers = new Map<string, NodeJS.Timeout>();
  const isQuiet = (sessionId: string) => !(timers.has(sessionId) || options.isBusy(sessionId));

  return {
    host(sessionId) {
      addPruning(hosted, sessionId, isQuiet, pruning);
    },
    hosted() {
      return hosted;
    },
    isHosted(sessionId) {
      return hosted.has(sessionId);
    },
    schedule(sessionId) {
      if (!hosted.has(sessionId) || timers.has(sessionId)) return;
      timers.set(
        sessionId,
        setTimeout(function autoResume() {
          timers.delete(sessionId);
          options.resume(sessionId).catch(options.onError);
        }, delayMs),
      );
    },
    isQuiet,
    cancel() {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}

/** Why a session's auto-resume stopped with notifications still waiting: its cap was reached. */
export interface AutoResumeStop {
  /** The auto-resumes the session had since a person last spoke (`limits.maxAutoResumes`). */
  resumes: number;
  /** The messages (notifications) the primary agent has not answered yet. */
  waiting: number;
}

/**
 * Whether the session stopped resuming on its own because it reached `maxAutoResumes` while
 * notifications wait for its next turn (the messages after its last answer, all of them the
 * runtime's): what the stored session and its messages say, for a view to tell the person.
 * @returns `null` when the cap was not reached, or nothing waits
 */
export function autoResumeStopOf(
  session: { auto_resumes: number; user_canceled_at: string | null },
  messages: ReadonlyArray<{ role: string }>,
  maxAutoResumes: number,
): AutoResumeStop | null {
  if (session.user_canceled_at !== null || session.auto_resumes < maxAutoResumes) return null;
  let waiting = 0;
  for (let index = messages.length - 1; index >= 0 && messages[index]?.role === 'user'; index--) waiting++;
  return waiting === 0 ? null : { resumes: session.auto_resumes, waiting };
}

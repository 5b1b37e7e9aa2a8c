import { writeLine, type OutputStream } from './cli-context.ts';
import { describeRunEnd, messageDeliveredLine, runLabel } from './run-lines.ts';
import { RunTracker } from './run-tracker.ts';
import type { RunOutcome, RunView } from './run-view.ts';
import { printClosingHints } from './closing-hints.ts';
import { approvalLine } from './approval-lines.ts';
import { messageText } from '../executors/message-codec.ts';
import { toolFailureLines } from './tool-failure-lines.ts';
import { systemNowMs, type NowMs } from '../util/clock.ts';

/** Options of {@link createPlainView}. */
export interface PlainViewOptions {
  stdout: OutputStream;
  stderr: OutputStream;
  sessionId: string;
  /** @default the system clock */
  now?: () => string;
  /** The clock in epoch milliseconds the activity lines are throttled on. @default systemNowMs */
  nowMs?: NowMs;
  /** Activity lines of one run are printed at most this often. @default 2000 */
  activityIntervalMs?: number;
  /**
   * Whether an ask's line says how to answer it from elsewhere (`cadre approve ...`): only while
   * asks wait for a person, not when they are denied or approved at once. @default true
   */
  answerHint?: boolean;
}

interface Throttle {
  lastAt: number;
  last?: string;
  pending?: string;
  timer?: NodeJS.Timeout;
}

/**
 * `cadre run` when stdout is not a terminal: append-only lines that read well in logs. Progress
 * goes to stderr, one line per event worth seeing (`[run_... researcher] started: ...`, its tool
 * calls and activity at most every 2 s, its end); the primary agent's answers alone go to stdout,
 * each as it is given (one given while a background run works, and those of later turns after an
 * auto-resume), so `cadre run ... > answer.md` keeps just the answers, in order.
 */
export function createPlainView(options: PlainViewOptions): RunView {
  const { stdout, stderr, sessionId, activityIntervalMs = 2000, nowMs = systemNowMs } = options;
  const now = options.now ?? (() => new Date().toISOString());
  const tracker = new RunTracker(sessionId);
  const throttles = new Map<string, Throttle>();
  /** The `seq` of each answer already on stdout. */
  const written = new Set<number>();
  /** The primary agent's failed tool calls already said. */
  const failures = new Set<string>();

  function writeAnswer(seq: number, text: string): void {
    if (written.has(seq) || text.trim() === '') return;
    written.add(seq);
    writeLine(stdout, text.trimEnd());
  }

  function printActivity(runId: string, label: string, text: string): void {
    const throttle = throttles.get(runId) ?? { lastAt: 0 };
    throttles.set(runId, throttle);
    if (text === throttle.last) return;
    const elapsed = nowMs() - throttle.lastAt;
    if (elapsed >= activityIntervalMs) {
      clearTimeout(throttle.timer);
      throttle.timer = undefined;
      throttle.pending = undefined;
      throttle.lastAt = nowMs();
      throttle.last = text;
      writeLine(stderr, `${label} ${text}`);
      return;
    }
    throttle.pending = text;
    throttle.timer ??= setTimeout(() => {
      throttle.timer = undefined;
      const pending = throttle.pending;
      if (pending !== undefined) printActivity(runId, label, pending);
    }, activityIntervalMs - elapsed);
  }

  function stopThrottle(runId: string): void {
    const throttle = throttles.get(runId);
    if (throttle) clearTimeout(throttle.timer);
    throttles.delete(runId);
  }

  return {
    event(event) {
      if (event.type === 'message') {
        const { message } = event;
        if (message.session_id !== sessionId) return;
        if (message.role === 'assistant') writeAnswer(message.seq, messageText(message.content));
        for (const failure of toolFailureLines(message)) {
          if (failures.has(failure.toolCallId)) continue;
          failures.add(failure.toolCallId);
          writeLine(stderr, failure.line);
        }
        return;
      }
      if (event.type === 'approval') {
        writeLine(stderr, approvalLine(event.approval, { hint: options.answerHint ?? true }));
        return;
      }
      const change = tracker.apply(event);
      if (!change) return;
      const { run, type, activity } = change;
      if (type === 'run-start' && run.status === 'running') writeLine(stderr, `${runLabel(run)} started: ${run.description}`);
      else if (type === 'warning' && event.type === 'run-event' && 'kind' in event.event.data && event.event.data.kind === 'recovered') {
        writeLine(stderr, `${runLabel(run)} resumed (its process had died): ${run.description}`);
      } else if (type === 'message-deliver' && event.type === 'run-event') {
        const line = messageDeliveredLine(run, (event.event.data as { message_id?: unknown }).message_id);
        if (line) writeLine(stderr, line);
      } else if (type === 'run-end') {
        stopThrottle(run.id);
        writeLine(stderr, `${runLabel(run)} ${describeRunEnd(run, now())}`);
      } else if (activity !== undefined && run.status === 'running' && activity.kind !== 'waiting_for_model') {
        printActivity(run.id, runLabel(run), activity.text);
      }
    },
    notice(text) {
      writeLine(stderr, text);
    },
    finish(outcome: RunOutcome) {
      for (const runId of [...throttles.keys()]) stopThrottle(runId);
      // The stored answers are the record: one whose event this view did not see is written now.
      if (outcome.answers) for (const answer of outcome.answers) writeAnswer(answer.seq, answer.text);
      else if (written.size === 0 && outcome.text.trim() !== '') writeLine(stdout, outcome.text.trimEnd());
      printClosingHints(stderr, outcome);
    },
  };
}

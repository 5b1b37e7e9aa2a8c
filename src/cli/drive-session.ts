import { messageText } from '../executors/message-codec.ts';
import type { Cadre } from '../runtime/create-cadre.ts';
import { autoResumeStopOf } from '../sessions/auto-resume.ts';
import type { RunOutcome, RunView } from './run-view.ts';

/** Options of {@link driveSession}. */
export interface DriveSessionOptions {
  cadre: Cadre;
  sessionId: string;
  prompt: string;
  view: RunView;
  /** Where Ctrl-C comes from. @default process */
  signals?: Pick<NodeJS.Process, 'on' | 'off'>;
  /** Called on a second Ctrl-C: leave at once. @default process.exit(130) */
  exitNow?: () => void;
  /** How often to look for a stop of this session from another process. @default 500 */
  stopPollMs?: number;
  /** How long to wait before checking a second time that the session is idle. @default 150 */
  settleMs?: number;
  /**
   * Recover the session's runs left by a dead process (resume or abandon them) before the
   * prompt is sent, once the view listens, so it shows every recovered run. @default false
   */
  recover?: boolean;
}

/**
 * Sends the prompt, shows live events, and waits until the primary agent is idle and no run of
 * the session is queued or running. Ctrl-C once stops the session (its turn and its runs end
 * `canceled_by_user`) and waits for that to settle; twice leaves at once. A `cadre stop` of this
 * session from another process is noticed within `stopPollMs`.
 */
export async function driveSession(options: DriveSessionOptions): Promise<RunOutcome> {
  const { cadre, sessionId, prompt, view, signals = process, stopPollMs = 500, settleMs = 150 } = options;
  const exitNow = options.exitNow ?? (() => process.exit(130));
  const { store } = cadre;
  const before = (await store.listMessages(sessionId)).at(-1)?.seq ?? 0;
  const startedAt = new Date().toISOString();
  let stoppedByPerson = false;

  function stop(notice: string): void {
    if (stoppedByPerson) return;
    stoppedByPerson = true;
    view.notice(notice);
    cadre.stopSession(sessionId).catch(() => {});
  }

  function onInterrupt(): void {
    if (stoppedByPerson) exitNow();
    else stop('Stopping the session and its runs... (press Ctrl-C again to quit at once)');
  }

  // `cadre stop SESSION_ID` in another process marks the session in the store. This process must
  // learn of it too, to report a person's stop (exit code 130) even when no turn was running.
  const poll = setInterval(() => {
    store.getSession(sessionId).then(
      (session) => {
        if (session?.user_canceled_at && session.user_canceled_at > startedAt) stop('Stopped from another process (cadre stop).');
      },
      () => {},
    );
  }, stopPollMs);
  const unsubscribe = cadre.subscribe((event) => view.event(event));
  signals.on('SIGINT', onInterrupt);
  try {
    if (options.recover) await cadre.recover({ sessionId });
    const turn = await cadre.send(sessionId, prompt);
    await cadre.waitForIdle(sessionId);
    // waitForIdle can resolve in the moment between a run's final state being stored and this
    // process acting on it (its run-end event, its notification, an auto-resume): look again.
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    await cadre.waitForIdle(sessionId);
    // What is shown as the outcome is committed first (the store acknowledges writes before that).
    await store.flush();
    const session = await store.getSession(sessionId);
    const messages = await store.listMessages(sessionId, { afterSeq: before });
    const answers = messages
      .filter((message) => message.role === 'assistant')
      .map((message) => ({ seq: message.seq, text: messageText(message.content) }))
      .filter((answer) => answer.text.trim() !== '');
    const answer = answers.at(-1)?.text ?? '';
    // A `cadre stop` from another process can land between two polls and the turn's end: the
    // session's own mark is the record of it, read here once more rather than left to the poll.
    const stoppedElsewhere = session?.user_canceled_at != null && session.user_canceled_at > startedAt;
    if (stoppedByPerson || stoppedElsewhere || turn.status === 'canceled' || session?.status === 'canceled') {
      return { sessionId, status: 'canceled', text: answer, answers };
    }
    if (turn.status === 'failed' || session?.status === 'failed') {
      const error = turn.error ?? 'The primary agent failed while handling a subagent notification.';
      return { sessionId, status: 'failed', text: answer, answers, error };
    }
    // Notifications left waiting because the session reached its auto-resume cap: said, not silent.
    const autoResumeStop = session ? autoResumeStopOf(session, messages, cadre.limits.maxAutoResumes) : null;
    return { sessionId, status: 'completed', text: answer, answers, ...(autoResumeStop ? { autoResumeStop } : {}) };
  } finally {
    clearInterval(poll);
    signals.off('SIGINT', onInterrupt);
    unsubscribe();
  }
}

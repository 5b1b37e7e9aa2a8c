import type { CadreEvent } from '../runs/run-bus.ts';
import { writeLine, type OutputStream } from './cli-context.ts';
import type { RunOutcome, RunView } from './run-view.ts';

/**
 * `cadre run --json`: one JSON object per line on stdout, one per {@link CadreEvent}, each with
 * its `type`. Text deltas of a session that arrive together are joined into one line (at most
 * every 50 ms). The last line is `{"type":"session-end",...}`. Nothing else is written to stdout.
 */
export function createJsonView({ stdout, stderr }: { stdout: OutputStream; stderr: OutputStream }): RunView {
  let pending: { session_id: string; text: string } | undefined;
  let timer: NodeJS.Timeout | undefined;

  function flush(): void {
    clearTimeout(timer);
    timer = undefined;
    if (pending) writeLine(stdout, JSON.stringify({ type: 'text-delta', ...pending }));
    pending = undefined;
  }

  return {
    event(event) {
      if (event.type === 'text-delta') {
        if (pending && pending.session_id !== event.session_id) flush();
        pending ??= { session_id: event.session_id, text: '' };
        pending.text += event.text;
        timer ??= setTimeout(flush, 50);
        return;
      }
      flush();
      writeLine(stdout, JSON.stringify(event));
    },
    notice(text) {
      writeLine(stderr, text);
    },
    finish(outcome: RunOutcome) {
      flush();
      const { sessionId, status, text, error, autoResumeStop } = outcome;
      const stopped = autoResumeStop ? { auto_resume_stopped: { resumes: autoResumeStop.resumes, waiting: autoResumeStop.waiting } } : {};
      writeLine(stdout, JSON.stringify({ type: 'session-end', session_id: sessionId, status, text, ...(error ? { error } : {}), ...stopped }));
    },
  };
}

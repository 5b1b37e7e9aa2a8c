import type { RunRecord } from '../store/records.ts';
import { isFinished } from '../store/records.ts';
import { RunStopSignal } from '../runs/run-stop.ts';
import type { DelegationServices } from './delegation-services.ts';
import { consumeRun } from './run-views.ts';

/**
 * Waits for foreground runs the way a parent expects: until they finish; if the parent's turn is
 * stopped, they stop with it; if they pass `limits.foregroundWarningMs`, they are promoted to the
 * background (warning `long_running`, `promoted_at`) and keep going, and the parent gets control
 * back. Finished runs are marked read, because their result goes to the parent now.
 */
export async function awaitForeground(services: DelegationServices, runs: RunRecord[], signal: AbortSignal, via: string): Promise<RunRecord[]> {
  const timeoutMs = services.limits.foregroundWarningMs;
  const waited = await Promise.all(runs.map((run) => (isFinished(run.status) ? run : services.runs.wait(run.id, { signal, timeoutMs }))));
  return Promise.all(
    waited.map(async (run) => {
      if (isFinished(run.status)) return consumeRun(services, run, via);
      if (signal.aborted) {
        const stopped = await services.runs.stop(run.id, RunStopSignal.causeOf(signal));
        return stopped ?? run;
      }
      return promote(services, run, via);
    }),
  );
}

async function promote(services: DelegationServices, run: RunRecord, via: string): Promise<RunRecord> {
  const at = services.now();
  const promoted = await services.ledger.update(
    run.id,
    { mode: 'background', promoted_at: at, warnings: [...run.warnings, { kind: 'long_running', at }] },
    { type: 'warning', data: { kind: 'long_running' } },
  );
  const current = promoted ?? run;
  // It may have finished while being promoted; then its result is ready now.
  return isFinished(current.status) ? consumeRun(services, current, via) : current;
}

/** The note for a run that went on in the background after the foreground warning. */
export function promotedNote(services: DelegationServices): string {
  const minutes = Math.round(services.limits.foregroundWarningMs / 60_000);
  const after = minutes >= 1 ? `${minutes} minutes` : `${Math.round(services.limits.foregroundWarningMs / 1000)} seconds`;
  return `This run has been going for over ${after}, so it now continues in the background; it was not stopped. You will get a notification when it finishes. Meanwhile use agent_output (wait: true) to check on it or agent_stop to stop it.`;
}

import type { RunRecord } from '../store/records.ts';
import { isFinished } from '../store/records.ts';
import type { DelegationServices } from './delegation-services.ts';

/** `12s`, `3m 04s`, `1h 02m`: how long a run has been going, or went. */
export function formatElapsed(run: Pick<RunRecord, 'created_at' | 'started_at' | 'ended_at'>, now: string): string {
  const start = Date.parse(run.started_at ?? run.created_at);
  const end = Date.parse(run.ended_at ?? now);
  const seconds = Math.max(0, Math.round((end - start) / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/** Marks a finished run's result as read by its parent (once), with a `result-consume` event. */
export async function consumeRun(services: DelegationServices, run: RunRecord, via: string): Promise<RunRecord> {
  if (!isFinished(run.status) || run.consumed_at !== null) return run;
  const updated = await services.ledger.update(run.id, { consumed_at: services.now() }, { type: 'result-consume', data: { via } });
  return updated ?? run;
}

/** The answer to an id that is unknown or belongs to another session: the same either way. */
export function noSuchRun(runId: string): string {
  return `No subagent run '${runId}' in this session.`;
}

/** Whether a run's result is waiting to be read. */
export function isUnread(run: RunRecord): boolean {
  return isFinished(run.status) && run.consumed_at === null;
}

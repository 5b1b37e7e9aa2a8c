import type { RunRecord } from '../store/records.ts';
import { ownerIsAlive, ownerIsGone } from '../util/owner-liveness.ts';

type LeaseFields = Pick<RunRecord, 'status' | 'lease_owner' | 'lease_expires_at'>;

/**
 * Whether a queued or running run has lost the process that executes it: that process is
 * certainly dead (same host, no such pid), or its lease ran out and it is not known to be alive
 * (another host, or a pid that no longer exists). The stored status is left as it is: recovery
 * (`cadre run --session`, `cadre serve`) resumes or abandons such a run.
 */
export function runOwnerGone(run: LeaseFields, now: string): boolean {
  if (run.status !== 'queued' && run.status !== 'running') return false;
  if (run.lease_owner !== null && ownerIsGone(run.lease_owner)) return true;
  const expired = run.lease_expires_at === null || run.lease_expires_at < now;
  return expired && !ownerIsAlive(run.lease_owner);
}

/** `running`, or `running (owner gone)` for a run whose process died: the status as lists show it. */
export function displayStatus(run: LeaseFields, now: string): string {
  return runOwnerGone(run, now) ? `${run.status} (owner gone)` : run.status;
}

/**
 * The time a view measures a run's elapsed time up to: now, or, when its owner is gone, the end
 * of its last lease (the last the run was known to be worked on), so the time stops growing.
 */
export function elapsedUntil(run: LeaseFields, now: string): string {
  if (!runOwnerGone(run, now) || run.lease_expires_at === null) return now;
  return run.lease_expires_at < now ? run.lease_expires_at : now;
}

/** A run as JSON views show it: the record with `owner_gone` (see {@link runOwnerGone}). */
export type RunView = RunRecord & { owner_gone: boolean };

/** The record with `owner_gone`, for JSON output (`cadre runs --json`, `cadre show --json`, the HTTP API). */
export function viewRun(run: RunRecord, now: string): RunView {
  return { ...run, owner_gone: runOwnerGone(run, now) };
}

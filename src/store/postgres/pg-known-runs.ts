import type { RunRecord } from '../records.ts';
import { copyRun, runFromRow, runToSql, setRunField } from '../sqlite/rows.ts';
import type { RunPatch } from '../store.ts';
import { setBounded } from '../../util/bounded-map.ts';

/**
 * The runs as this process last wrote them or had them back from a write, so that a
 * compare-and-set whose patch depends on the run as it stands (a run's end decides its
 * notification on it) needs no read first: its change is guarded by the whole row being as
 * known, and a row another process (or a write not followed here) changed fails the guard, after
 * which the store reads the run first as before. Knowing a run is never taken for reading it.
 */
export interface KnownRuns {
  /** A copy of the run as known, if it is. */
  get(id: string): RunRecord | undefined;
  /** The run as a write just left it (a copy is kept while it is active: a finished run moves no more). */
  learn(run: RunRecord): void;
  /** The run as inserted from these values (in `runColumns` order). */
  learnInserted(values: readonly unknown[]): void;
  /** A held patch of the run, applied to what is known of it. */
  patch(id: string, patch: RunPatch): void;
  /** Lease renewals of `owner`'s active runs. */
  renewed(owner: string, expiresAt: string): void;
  forget(id: string): void;
}

const activeStatuses: ReadonlySet<string> = new Set(['queued', 'running']);

/** Known active runs, `limit` at most (the oldest forgotten first). */
export function createKnownRuns(limit = 5_000): KnownRuns {
  const runs = new Map<string, RunRecord>();
  return {
    get(id) {
      const run = runs.get(id);
      return run && copyRun(run);
    },
    learn(run) {
      if (activeStatuses.has(run.status)) setBounded(runs, run.id, copyRun(run), limit);
      else runs.delete(run.id);
    },
    learnInserted(values) {
      // What a read of the row would give (JSON fields as stored, the activity as decoded).
      const run = runFromRow(values);
      setBounded(runs, run.id, run, limit);
    },
    patch(id, patch) {
      const run = runs.get(id);
      if (run) for (const [field, value] of Object.entries(patch)) if (value !== undefined) setRunField(run, field, value);
    },
    renewed(owner, expiresAt) {
      for (const run of runs.values()) if (run.lease_owner === owner && activeStatuses.has(run.status)) run.lease_expires_at = expiresAt;
    },
    forget(id) {
      runs.delete(id);
    },
  };
}

/** The row a known run is expected to be, as stored (see `RunChange.expected`). */
export function expectedRow(run: RunRecord): unknown[] {
  return runToSql(run) as unknown[];
}

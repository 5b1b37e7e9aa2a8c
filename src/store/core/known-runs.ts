import { isFinished, type RunRecord } from '../records.ts';
import { setBounded } from '../../util/bounded-map.ts';
import { copyRun, setRunField } from './run-rows.ts';

/**
 * The runs as this process last wrote them or had them back from a write, so that the next change
 * of a run starts from its record instead of reading its row back (SQLite, while no other
 * connection committed), or is sent guarded by the whole row being as known (Postgres, where a
 * run's end decides its notification on it). Records handed out are copies.
 */
export interface KnownRuns {
  has(id: string): boolean;
  /** A copy of the run as known, if it is. */
  get(id: string): RunRecord | undefined;
  /** The known record itself, forgotten here: the caller owns it until it `keep`s it again. */
  take(id: string): RunRecord | undefined;
  /** Keeps `run` itself (the caller hands it over); a finished run is forgotten unless `keepFinished`. */
  keep(run: RunRecord): void;
  /** Keeps a copy of `run`. */
  learn(run: RunRecord): void;
  /** Sets changed fields of a known run (a field `activity` sets `last_activity` too). */
  patch(id: string, fields: Iterable<readonly [field: string, value: unknown]>): void;
  /** Changes the known record of run `id` in place, if there is one. */
  update(id: string, change: (run: RunRecord) => void): void;
  /** Lease renewals of `owner`'s active runs. */
  renewed(owner: string, expiresAt: string): void;
  /** Forgets run `id`, or every run. */
  forget(id?: string): void;
}

/** Options of {@link createKnownRuns}. */
export interface KnownRunsOptions {
  /** Runs kept at most (the oldest forgotten first). @default 4096 */
  limit?: number;
  /** Keep finished runs too (their record proves they exist). @default false */
  keepFinished?: boolean;
}

/** The known runs of one store (see {@link KnownRuns}). */
export function createKnownRuns({ limit = 4096, keepFinished = false }: KnownRunsOptions = {}): KnownRuns {
  const runs = new Map<string, RunRecord>();
  const keep = (run: RunRecord) => {
    if (keepFinished || !isFinished(run.status)) setBounded(runs, run.id, run, limit);
    else runs.delete(run.id);
  };
  return {
    has: (id) => runs.has(id),
    get(id) {
      const run = runs.get(id);
      return run && copyRun(run);
    },
    take(id) {
      const run = runs.get(id);
      if (run !== undefined) runs.delete(id);
      return run;
    },
    keep,
    learn: (run) => keep(copyRun(run)),
    patch(id, fields) {
      const run = runs.get(id);
      if (run) for (const [field, value] of fields) if (value !== undefined) setRunField(run, field, value);
    },
    update(id, change) {
      const run = runs.get(id);
      if (run) change(run);
    },
    renewed(owner, expiresAt) {
      for (const run of runs.values()) if (run.lease_owner === owner && !isFinished(run.status)) run.lease_expires_at = expiresAt;
    },
    forget(id) {
      if (id === undefined) runs.clear();
      else runs.delete(id);
    },
  };
}

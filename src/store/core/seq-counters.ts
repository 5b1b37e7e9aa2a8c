import { setBounded } from '../../util/bounded-map.ts';

/** The last seq used per key (a session's messages, a run's events), as far as this process knows. */
export interface SeqCounters {
  has(key: string): boolean;
  /** The last seq of `key`, if known. */
  last(key: string): number | undefined;
  /**
   * Takes the next seq of `key`: one past the last known, else past `readLast()` (the engine's
   * stored maximum, and what it holds). Throws for a key it does not know without `readLast`.
   */
  next(key: string, readLast?: () => number): number;
  /** `seq` is used (kept if it is past the last known). */
  learn(key: string, seq: number): void;
  forget(key: string): void;
  clear(): void;
}

/** Runs and sessions whose last seq is kept in memory, each, by default. */
export const seqCacheSize = 20_000;

/**
 * Sequence allocation for the appends of both stores: each seq comes from the counter, so an
 * append needs no read of the table. Bounded: a forgotten key is read again (SQLite) or written
 * with its seq computed in SQL (Postgres). Another process appending to the same key makes the
 * engine's commit move the held rows past its rows (see `moveHeldPast`) and `learn` the new last.
 */
export function createSeqCounters(limit = seqCacheSize): SeqCounters {
  const seqs = new Map<string, number>();
  return {
    has: (key) => seqs.has(key),
    last: (key) => seqs.get(key),
    next(key, readLast) {
      let last = seqs.get(key);
      if (last === undefined) {
        if (readLast === undefined) throw new Error(`No seq is known for '${key}'.`);
        last = readLast();
      }
      setBounded(seqs, key, last + 1, limit);
      return last + 1;
    },
    learn(key, seq) {
      setBounded(seqs, key, Math.max(seqs.get(key) ?? 0, seq), limit);
    },
    forget: (key) => void seqs.delete(key),
    clear: () => seqs.clear(),
  };
}

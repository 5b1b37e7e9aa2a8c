import type pg from 'pg';
import { createPgOutbox, type PgMergeable } from './pg-outbox.ts';
import type { NameStatement } from './pg-run-writes.ts';

const ignore = () => {};

/**
 * Which runs and sessions (`r:<id>`, `s:<id>`) this process has written to without the write
 * being committed yet, so that a lookup of one it has not may skip the writer's queue.
 */
export interface PendingKeys {
  /** `keys` are written until `done` settles (a held write: until the batch holding it commits). */
  mark(keys: readonly string[], done: Promise<unknown>): void;
  /** A write whose keys are not known (it may change any run or session) is under way until `done` settles. */
  markUnknown(done: Promise<unknown>): void;
  /** Whether a lookup of `key` must come after this process's writes (one of them may change it). */
  pending(key: string): boolean;
}

/** Counts uncommitted writes per key; see {@link PendingKeys}. */
export function createPendingKeys(): PendingKeys {
  const counts = new Map<string, number>();
  let unknown = 0;
  return {
    mark(keys, done) {
      for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
      void done.then(ignore, ignore).then(() => {
        for (const key of keys) {
          const count = (counts.get(key) ?? 1) - 1;
          if (count > 0) counts.set(key, count);
          else counts.delete(key);
        }
      });
    },
    markUnknown(done) {
      unknown++;
      void done.then(ignore, ignore).then(() => void unknown--);
    },
    pending(key) {
      return unknown > 0 || counts.has(key);
    },
  };
}

/**
 * Lookups by key on the pool, beside the writer: those requested in one event-loop turn share one
 * statement per kind (see `PgMergeable`), as they would in the writer's batch. `query` sends one
 * statement (on any connection of the pool, retried while the server restarts).
 */
export function createPoolLookups(
  query: (config: pg.QueryConfig) => Promise<pg.QueryResult>,
  name: NameStatement,
): <I, T>(op: PgMergeable<I, T>) => Promise<T> {
  const client = { query } as unknown as pg.ClientBase;
  let waiting: Array<{ op: PgMergeable<unknown, unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void }> = [];
  function send(): void {
    const entries = waiting;
    waiting = [];
    const outbox = createPgOutbox(client, name);
    outbox.mode = 'grouped';
    for (const { op, resolve, reject } of entries) outbox.merge(op).then(resolve, reject);
    outbox.flush();
  }
  return <I, T>(op: PgMergeable<I, T>) =>
    new Promise<T>((resolve, reject) => {
      if (waiting.length === 0) setImmediate(send);
      waiting.push({ op: op as PgMergeable<unknown, unknown>, resolve: resolve as (value: unknown) => void, reject });
    });
}

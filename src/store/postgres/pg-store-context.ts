import type pg from 'pg';
import type { NewRunEvent } from '../records.ts';
import type { KnownRuns } from '../core/known-runs.ts';
import type { AnswerIndex } from '../core/result-refs.ts';
import type { SeqCounters } from '../core/seq-counters.ts';
import type { PgBatches, PgWork, PgWorkOptions } from './pg-batches.ts';
import type { PgMergeable } from './pg-outbox.ts';
import type { NameStatement } from './pg-run-writes.ts';

/** What the parts of the Postgres store (runs, messages, approvals) share: its connection, its commit and the write-behind core's state. */
export interface PgStoreContext {
  batches: PgBatches;
  name: NameStatement;
  /** Queues a write that reads; resolves after its commit. */
  write: <T, R = undefined>(work: PgWork<T, R>, options?: PgWorkOptions<R>) => Promise<T>;
  /** A read after this process's earlier writes (see `openPostgresStore`). */
  read: <R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
    options?: { array?: boolean; listing?: boolean },
  ) => Promise<R[]>;
  /** A lookup by key after this process's earlier writes (see `PgMergeable`). */
  lookup: <I, T>(op: PgMergeable<I, T>) => Promise<T>;
  /** A write of these runs and sessions, in their order (see `createKeyOrder`). */
  ordered: <T>(keys: readonly string[], decide: () => T | Promise<T>) => Promise<T>;
  /** Why the store takes no writes now (closed, failed), or null. */
  refusal: () => Error | null;
  /** The last seq of each run's events this process knows (a run whose last seq is known exists). */
  eventSeqs: SeqCounters;
  /** The last seq of each session's messages this process knows. */
  messageSeqs: SeqCounters;
  /** Runs as this process's writes left them (see `createKnownRuns`). */
  known: KnownRuns;
  /** After a commit: the seqs of events written in SQL are known now. */
  learnEvents: (events: readonly NewRunEvent[]) => void;
  /** The answers of finished runs this process committed lately, which messages are stored referring to. */
  answers: AnswerIndex;
}

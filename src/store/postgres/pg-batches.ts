import type pg from 'pg';
import { StoreFailureError } from '../store-failure-error.ts';
import { systemNowMs, type NowMs } from '../../util/clock.ts';
import { createHeldSegment, heldKeys, renumberHeld, type HeldSegment } from './pg-held-writes.ts';
import { createPgOutbox, type PgMerge } from './pg-outbox.ts';
import { corkable, firstCause, isConnectionError, isDatabaseError, isRetryable, settle, type Outcome } from './pg-errors.ts';
import { heldQuery, queuedOrder, runCarefully, type Item, type PgWork } from './pg-batch-items.ts';

export type { PgWork } from './pg-batch-items.ts';

export { isConnectionError } from './pg-errors.ts';

const ignore = () => {};

/** Options of a queued {@link PgWork}. */
export interface PgWorkOptions<R> {
  /**
   * The work only reads: it sees every write queued or held before it, and maybe some queued
   * after it in the same batch (in the same transaction when there is one), and resolves with the
   * rest of its batch. A batch of reads and held writes runs without a transaction.
   * @default false
   */
  readOnly?: boolean;
  /**
   * What the work must read first (rows it locks and checks, a last seq): sent in its place in
   * the batch, while the work itself is sent once the reads of the batch are answered, so a
   * batch of many compare-and-sets costs one more round trip, not one per write (and their
   * merged reads one statement). Writes queued after it are sent before it meanwhile: they never
   * touch its runs and sessions (the store keeps a later write of the same ones for a later
   * batch); reads queued after it wait for it.
   */
  read?: (client: pg.ClientBase, merge: PgMerge) => Promise<R>;
}

/** Writes grouped into shared transactions on one connection (group commit). */
export interface PgBatches {
  /**
   * The open segment for writes acknowledged before their commit (see `HeldSegment`); they join
   * the next transaction, after every write queued before them.
   */
  held(): HeldSegment;
  /** Queues `work` after every write so far; resolves with its value once its transaction committed. */
  write<T, R = undefined>(work: PgWork<T, R>, options?: PgWorkOptions<R>): Promise<T>;
  /** Queues a read after every write so far (see `PgWorkOptions.readOnly`). */
  read<T>(work: PgWork<T>): Promise<T>;
  /** Whether writes are queued, held or being committed (a read must then come after them). */
  busy(): boolean;
  /** Resolves once every write queued or held before it is committed; rejects if the store failed. */
  settled(): Promise<void>;
  /** Why the store takes no more writes, once it does not. */
  readonly failure: StoreFailureError | null;
  onFailure(listener: (failure: StoreFailureError) => void): () => void;
  close(): Promise<void>;
}

/** Options of {@link createPgBatches}. */
export interface PgBatchesOptions {
  /** Opens a new connection for the writer (pipelined, with the store's `search_path`). */
  connect: () => Promise<pg.Client>;
  /** The database, named in a failure's message. */
  label: string;
  /** How long a batch keeps trying while the server cannot be reached (a restart). @default 30000 */
  reconnectMs?: number;
  /** The clock in epoch milliseconds that deadline is read on. @default systemNowMs */
  nowMs?: NowMs;
  /**
   * Reads the stored last seq of `keys` (runs for events, sessions for messages), so held rows
   * another process's rows collided with can move past them.
   */
  storedSeqs: (client: pg.ClientBase, table: 'events' | 'messages', keys: string[]) => Promise<Map<string, number>>;
  /** Told the last seq held per key after held rows moved. */
  onRenumbered: (table: 'events' | 'messages', last: Map<string, number>) => void;
  /** Named statements by text (see `createStatementNames`). */
  name: (query: { text: string; values: unknown[] }) => pg.QueryConfig;
}

interface Batch {
  items: Item[];
  /** Resolves once the batch is done (committed, or its writes rejected). */
  done: Promise<void>;
  finish: () => void;
}

/**
 * Group commit for the Postgres store, as the SQLite store does it. Writes that need nothing read
 * back are held (`held()`) and acknowledged at once; writes that must read (compare-and-set) are
 * queued (`write()`) and resolve after their commit. At the end of the event-loop turn, or when
 * the transaction under way commits, the next transaction takes everything queued and held so
 * far on one connection in pipeline mode: BEGIN, every held write as one multi-row statement,
 * the queued writes in order, the reads, COMMIT, sent together and answered in one round trip (a
 * read-then-write sends the rest after its read). Held writes go first: none of them touches a
 * run or session a queued write of the batch waits on (the store's key order keeps those for a
 * later batch). Reads go last, so each sees every write queued before it. Items that merge
 * (`PgMergeable`) share statements: consecutive writes of one kind, reads of one kind anywhere.
 * A batch of held writes alone is one statement.
 *
 * A batch that loses its connection (a server restart) is retried whole on a new one for up to
 * `reconnectMs`; one whose held rows collide with another process's moves them past and retries;
 * one a queued write fails is retried write by write under savepoints, so only that write
 * rejects. Held writes that cannot be committed are lost: the store then fails for good
 * (`StoreFailureError`), as the SQLite store does after a failed COMMIT.
 */
export function createPgBatches(options: PgBatchesOptions): PgBatches {
  const { connect, label, reconnectMs = 30_000, nowMs = systemNowMs, storedSeqs, onRenumbered, name } = options;
  const batches: Batch[] = [];
  let running: Promise<void> | null = null;
  // The batch being committed: first in `batches` until done, and it takes no more items.
  let current: Batch | null = null;
  let scheduled = false;
  let closed = false;
  let failure: StoreFailureError | null = null;
  const failureListeners = new Set<(failure: StoreFailureError) => void>();
  let writer: pg.Client | null = null;
  let writerBroken = false;

  function openBatch(): Batch {
    const last = batches[batches.length - 1];
    if (last && last !== current) return last;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const batch: Batch = { items: [], done, finish };
    batches.push(batch);
    return batch;
  }

  function schedule(): void {
    if (scheduled || running) return;
    scheduled = true;
    setImmediate(pump);
  }

  function pump(): void {
    scheduled = false;
    if (running) return;
    const batch = batches[0];
    if (!batch) return;
    current = batch;
    running = runBatch(batch).finally(() => {
      batches.shift();
      current = null;
      running = null;
      batch.finish();
      pump();
    });
  }

  function fail(cause: unknown): StoreFailureError {
    if (!failure) {
      failure = StoreFailureError.isInstance(cause) ? cause : new StoreFailureError(cause, label);
      for (const listener of failureListeners) listener(failure);
    }
    return failure;
  }

  async function connection(): Promise<pg.Client> {
    if (writer && !writerBroken) return writer;
    const previous = writer;
    writer = null;
    writerBroken = false;
    previous?.end().catch(ignore);
    const client = await connect();
    // A connection the server drops reports it here; the batch's statements then fail and it is retried.
    client.on('error', () => {
      if (writer === client) writerBroken = true;
    });
    writer = client;
    return client;
  }

  async function runBatch(batch: Batch): Promise<void> {
    const deadline = nowMs() + reconnectMs;
    let careful = false;
    for (let attempt = 0; ; attempt++) {
      if (failure && batch.items.some((item) => item.kind === 'held' || !item.readOnly)) return rejectAll(batch, failure);
      let client: pg.Client | null = null;
      try {
        client = await connection();
        const outcomes = careful ? await runCarefully(client, batch.items, name) : await runPipelined(client, batch.items);
        batch.items.forEach((item, index) => {
          if (item.kind !== 'work') return;
          const outcome = outcomes[index];
          if (outcome.ok) item.resolve(outcome.value);
          else item.reject(outcome.error);
        });
        return;
      } catch (error) {
        if (isConnectionError(error) || (client !== null && writerBroken)) {
          writerBroken = true;
          if (!closed && nowMs() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** Math.min(attempt, 5))));
            continue;
          }
        } else if (isRetryable(error) && attempt < 8) {
          try {
            await moveHeldRows(client!);
            continue;
          } catch (moving) {
            if (isConnectionError(moving)) continue;
            return giveUp(batch, moving);
          }
        } else if (!careful) {
          careful = true;
          continue;
        }
        return giveUp(batch, error);
      }
    }
  }

  /**
   * The batch cannot be committed: its queued writes and reads reject. Held writes were
   * acknowledged already and are lost with it, so then the store stops taking writes.
   */
  function giveUp(batch: Batch, error: unknown): void {
    rejectAll(batch, batch.items.some((item) => item.kind === 'held') ? fail(error) : error);
  }

  function rejectAll(batch: Batch, error: unknown): void {
    for (const item of batch.items) if (item.kind === 'work') item.reject(error);
  }

  /** Moves the batch's held rows (and those held since) past the seqs stored by another process. */
  async function moveHeldRows(client: pg.Client): Promise<void> {
    const segments = batches.flatMap((each) => each.items.filter((item) => item.kind === 'held').map((item) => (item as { segment: HeldSegment }).segment));
    for (const table of ['events', 'messages'] as const) {
      const keys = heldKeys(segments, table);
      if (keys.length === 0) continue;
      const moved = renumberHeld(segments, table, await storedSeqs(client, table, keys));
      if (moved.size > 0) onRenumbered(table, moved);
    }
  }

  /**
   * Sends the batch without waiting for answers (but for the reads of work that must read), in one write to the
   * socket: BEGIN, the held writes, the queued writes, the reads, COMMIT; a batch that writes one
   * statement at most (reads and held writes) needs no transaction. Throws the batch's first
   * database or connection error.
   */
  async function runPipelined(client: pg.Client, items: readonly Item[]): Promise<Outcome[]> {
    const { writes, reads } = queuedOrder(items);
    const transaction = writes.length > 0;
    const done: Outcome = { ok: true, value: undefined };
    const socket = corkable(client);
    const outbox = createPgOutbox(client, name);
    socket?.cork();
    const pending: Array<Promise<Outcome>> = items.map(() => Promise.resolve(done));
    const start = (work: PgWork<unknown, unknown>, read: unknown): Promise<Outcome> => {
      try {
        return settle(work(outbox.client, read, outbox.merge));
      } catch (error) {
        return Promise.resolve({ ok: false, error });
      }
    };
    const begin = transaction ? settle(client.query('BEGIN')) : Promise.resolve(done);
    const heldStatement = heldQuery(items, name);
    const held = heldStatement ? settle(client.query(heldStatement)) : Promise.resolve(done);
    // Work whose reads were sent, waiting for their answers.
    const reading: Array<{ index: number; work: PgWork<unknown, unknown>; read: Promise<Outcome> }> = [];
    for (const index of writes) {
      const item = items[index] as Extract<Item, { kind: 'work' }>;
      if (item.read) {
        outbox.mode = 'grouped';
        const read = item.read;
        reading.push({ index, work: item.work, read: start((readClient, _, merge) => read(readClient, merge), undefined) });
      } else {
        outbox.mode = 'consecutive';
        pending[index] = start(item.work, undefined);
      }
    }
    outbox.flush();
    if (reading.length > 0) {
      socket?.uncork();
      const answers = await Promise.all(reading.map((entry) => entry.read));
      socket?.cork();
      outbox.mode = 'consecutive';
      reading.forEach((entry, place) => {
        const answer = answers[place];
        pending[entry.index] = answer.ok ? start(entry.work, answer.value) : Promise.resolve(answer);
      });
      outbox.flush();
    }
    outbox.mode = 'grouped';
    for (const index of reads) pending[index] = start((items[index] as Extract<Item, { kind: 'work' }>).work, undefined);
    outbox.flush();
    const commit = transaction ? settle(client.query('COMMIT')) : Promise.resolve({ ok: true as const, value: { command: 'COMMIT' } });
    socket?.uncork();
    const outcomes = await Promise.all(pending);
    const [began, wrote, committed] = await Promise.all([begin, held, commit]);
    const all = [began, wrote, ...outcomes, committed];
    const broken = all.some((outcome) => !outcome.ok && (isDatabaseError(outcome.error) || isConnectionError(outcome.error)));
    // COMMIT in a transaction a statement failed in answers ROLLBACK, without an error.
    if (broken || !committed.ok || (committed.value as pg.QueryResult).command !== 'COMMIT') {
      if (transaction) await client.query('ROLLBACK').catch(ignore);
      throw firstCause(all) ?? new Error(`The transaction of a batch of writes to ${label} was rolled back.`);
    }
    return outcomes;
  }

  return {
    held() {
      const batch = openBatch();
      const last = batch.items[batch.items.length - 1];
      if (last?.kind === 'held') return last.segment;
      const segment = createHeldSegment();
      batch.items.push({ kind: 'held', segment });
      schedule();
      return segment;
    },

    write<T, R = undefined>(work: PgWork<T, R>, { readOnly = false, read }: PgWorkOptions<R> = {}): Promise<T> {
      if (closed) return Promise.reject(new Error(`The store ${label} is closed.`));
      if (failure && !readOnly) return Promise.reject(failure);
      return new Promise<T>((resolve, reject) => {
        openBatch().items.push({ kind: 'work', work: work as PgWork<unknown, unknown>, read, readOnly, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },

    read<T>(work: PgWork<T>): Promise<T> {
      return this.write(work, { readOnly: true });
    },

    busy() {
      return batches.length > 0;
    },

    async settled() {
      const last = batches[batches.length - 1];
      if (last) {
        schedule();
        await last.done;
      }
      if (failure) throw failure;
    },

    get failure() {
      return failure;
    },

    onFailure(listener) {
      failureListeners.add(listener);
      return () => void failureListeners.delete(listener);
    },

    async close() {
      await this.settled().catch(ignore);
      closed = true;
      await writer?.end().catch(ignore);
      writer = null;
    },
  };
}

import type { Pool, PoolClient } from 'pg';

/** A write of the Postgres store: SQL on the batch's connection, inside its transaction. */
export type PgWork<T> = (client: PoolClient) => Promise<T>;

/** Writes grouped into shared transactions on one connection at a time (group commit). */
export interface PgBatches {
  /** Queues `work`; resolves with its value once its transaction committed. */
  write<T>(work: PgWork<T>): Promise<T>;
  /** Resolves once every write queued before it has settled (committed or failed). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

interface Queued {
  work: PgWork<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Options of {@link createPgBatches}. */
export interface PgBatchesOptions {
  pool: Pool;
  /** How long a batch keeps trying while the server cannot be reached (a restart). @default 30000 */
  reconnectMs?: number;
  /** Writes in one transaction at most. @default 500 */
  maxBatch?: number;
}

const ignore = () => {};

/** Errors that mean the connection or server went away, not that the write was wrong. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code ?? '';
  if (/^(08|57P0[123])/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND'].includes(code)) return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(message);
}

/**
 * Errors a second try can cure: another process took the same seq (a unique violation on an
 * append), a deadlock or a serialization failure.
 */
export function isRetryable(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: string; constraint?: string };
  return code === '40P01' || code === '40001' || (code === '23505' && (constraint === 'run_events_pkey' || constraint === 'messages_pkey'));
}

/**
 * Group commit for the Postgres store. Writes queue up while a transaction is under way; the
 * next transaction takes all of them (up to `maxBatch`), each inside a savepoint so one that
 * fails (a duplicate id) is rolled back alone and rejected while the others commit. A write
 * resolves after its COMMIT, so what a write resolved is durable. A batch that loses its
 * connection (the server restarted) is retried whole on a new connection for up to
 * `reconnectMs`, so a restart costs latency, not writes; after that its writes reject.
 */
export function createPgBatches({ pool, reconnectMs = 30_000, maxBatch = 500 }: PgBatchesOptions): PgBatches {
  let queue: Queued[] = [];
  let running: Promise<void> | null = null;
  let closed = false;
  // Settles after the last write queued so far (writes settle in order).
  let last: Promise<void> = Promise.resolve();

  async function runBatch(batch: Queued[]): Promise<void> {
    const deadline = Date.now() + reconnectMs;
    // Writes rarely fail on their own: the batch first runs without savepoints (two round trips
    // fewer per write), and only after a failure again with one per write, to reject that one alone.
    let careful = batch.length === 1;
    for (let attempt = 0; ; attempt++) {
      let client: PoolClient | null = null;
      const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
      try {
        client = await pool.connect();
        // A connection the server drops between two statements of the batch reports it here; the
        // next statement then fails and the batch is retried.
        client.on('error', ignore);
        await client.query('BEGIN');
        for (const entry of batch) {
          if (!careful) {
            outcomes.push({ ok: true, value: await entry.work(client) });
            continue;
          }
          if (batch.length === 1) {
            outcomes.push({ ok: true, value: await entry.work(client) });
            continue;
          }
          for (let tries = 1; ; tries++) {
            await client.query('SAVEPOINT write');
            try {
              outcomes.push({ ok: true, value: await entry.work(client) });
              await client.query('RELEASE SAVEPOINT write');
              break;
            } catch (error) {
              if (isConnectionError(error)) throw error;
              await client.query('ROLLBACK TO SAVEPOINT write');
              if (isRetryable(error) && tries < 5) continue;
              outcomes.push({ ok: false, error });
              break;
            }
          }
        }
        await client.query('COMMIT');
        client.off('error', ignore);
        client.release();
        batch.forEach((entry, index) => {
          const outcome = outcomes[index];
          if (outcome.ok) entry.resolve(outcome.value);
          else entry.reject(outcome.error);
        });
        return;
      } catch (error) {
        if (client) {
          await client.query('ROLLBACK').catch(() => {});
          client.off('error', ignore);
          client.release(isConnectionError(error) ? (error as Error) : undefined);
        }
        if (!careful && !isConnectionError(error)) {
          careful = true;
          continue;
        }
        if ((isConnectionError(error) && !closed && Date.now() < deadline) || (isRetryable(error) && attempt < 5)) {
          await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** Math.min(attempt, 5))));
          continue;
        }
        // A lone write that failed on its own merits; or the server stayed away: all reject.
        for (const entry of batch) entry.reject(error);
        return;
      }
    }
  }

  function pump(): void {
    if (running || queue.length === 0) return;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    running = runBatch(batch).finally(() => {
      running = null;
      pump();
    });
  }

  return {
    write<T>(work: PgWork<T>): Promise<T> {
      if (closed) return Promise.reject(new Error('The Postgres store is closed.'));
      const written = new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        // Writes of the same event-loop turn join one transaction.
        if (!running && queue.length === 1) setImmediate(pump);
      });
      last = written.then(
        () => {},
        () => {},
      );
      return written;
    },
    settled() {
      return last;
    },
    async close() {
      await this.settled();
      closed = true;
    },
  };
}

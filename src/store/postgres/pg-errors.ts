import pg from 'pg';

/**
 * How the Postgres store's batches tell errors apart: a connection lost (retried on a new one), a
 * collision or deadlock a second try cures, an error of one statement; and the socket a batch is
 * sent through in one write.
 */

/** How one item of a batch ended. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** The outcome of a promise, as a value. */
export const settle = (promise: Promise<unknown>): Promise<Outcome> =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

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
  return code === '40P01' || code === '40001' || (code === '23505' && (constraint === 'run_event_rows_pkey' || constraint === 'messages_pkey'));
}

/**
 * The connection's socket, to send a whole batch in one write: `pg` writes each statement on its
 * own (one system call, and one wake-up of the server, each) unless the socket is corked.
 */
export function corkable(client: pg.Client): { cork(): void; uncork(): void } | null {
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
  return stream && typeof stream.cork === 'function' && typeof stream.uncork === 'function' ? (stream as { cork(): void; uncork(): void }) : null;
}

/** An error the server reported about a statement (not one of the caller's, not the connection's). */
export function isDatabaseError(error: unknown): boolean {
  return error instanceof pg.DatabaseError;
}

/** The error a failed batch failed of: the first that is not "the transaction is aborted". */
export function firstCause(outcomes: readonly Outcome[]): unknown {
  const errors = outcomes.flatMap((outcome) => (outcome.ok ? [] : [outcome.error]));
  return errors.find((error) => (error as { code?: string }).code !== '25P02') ?? errors[0];
}

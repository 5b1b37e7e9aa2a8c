import type pg from 'pg';
import { segmentStatement, type HeldSegment } from './pg-held-writes.ts';
import { directMerge, type PgMerge } from './pg-outbox.ts';
import { isConnectionError, isRetryable, type Outcome } from './pg-errors.ts';
import type { NameStatement } from './pg-run-writes.ts';

const ignore = () => {};

/**
 * A write that must read the database (a compare-and-set, a seq nobody here knows): it issues
 * its statements on the batch's connection, inside the batch's transaction, all of them before it
 * first waits (so the batch stays one pipeline), and resolves with its value once that
 * transaction committed. It gets what its `read` (see {@link PgWorkOptions}) found. Statements
 * sent through `merge` share one statement with other items' of the same key (see
 * `PgMergeable`). It may reject with an error of its own (not a database error) only before it
 * wrote anything: the batch then commits without it.
 */
export type PgWork<T, R = undefined> = (client: pg.ClientBase, read: R, merge: PgMerge) => Promise<T>;

/** What a batch holds, in order: held segments and queued work. */
export type Item =
  | { kind: 'held'; segment: HeldSegment }
  | {
      kind: 'work';
      work: PgWork<unknown, unknown>;
      read: ((client: pg.ClientBase, merge: PgMerge) => Promise<unknown>) | undefined;
      readOnly: boolean;
      resolve: (value: unknown) => void;
      reject: (error: unknown) => void;
    };

/** The statement of every held segment of a batch, or null when nothing is held. */
export function heldQuery(items: readonly Item[], name: NameStatement): pg.QueryConfig | null {
  const statement = segmentStatement(items.flatMap((item) => (item.kind === 'held' ? [item.segment] : [])));
  return statement && name(statement);
}

/** The indexes of a batch's queued writes, then of its reads, each in order. */
export function queuedOrder(items: readonly Item[]): { writes: number[]; reads: number[] } {
  const writes: number[] = [];
  const reads: number[] = [];
  items.forEach((item, index) => {
    if (item.kind === 'work') (item.readOnly ? reads : writes).push(index);
  });
  return { writes, reads };
}

/** One item at a time, each under a savepoint: a queued write that fails rejects alone. */
export async function runCarefully(client: pg.Client, items: readonly Item[], name: NameStatement): Promise<Outcome[]> {
  const outcomes: Outcome[] = items.map(() => ({ ok: true, value: undefined }));
  const { writes, reads } = queuedOrder(items);
  const merge = directMerge(client, name);
  await client.query('BEGIN');
  try {
    // Held writes were acknowledged: if they fail, the batch fails.
    const heldStatement = heldQuery(items, name);
    if (heldStatement) await client.query(heldStatement);
    for (const index of [...writes, ...reads]) {
      const item = items[index] as Extract<Item, { kind: 'work' }>;
      await client.query('SAVEPOINT item');
      try {
        outcomes[index] = { ok: true, value: await item.work(client, item.read ? await item.read(client, merge) : undefined, merge) };
        await client.query('RELEASE SAVEPOINT item');
      } catch (error) {
        if (isConnectionError(error) || isRetryable(error)) throw error;
        // A read or a write that failed on its own merits rejects alone.
        await client.query('ROLLBACK TO SAVEPOINT item');
        outcomes[index] = { ok: false, error };
      }
    }
    await client.query('COMMIT');
    return outcomes;
  } catch (error) {
    await client.query('ROLLBACK').catch(ignore);
    throw error;
  }
}

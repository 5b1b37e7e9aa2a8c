import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPendingKeys, createPoolLookups } from './pg-pending-keys.ts';
import type { PgMergeable } from './pg-outbox.ts';

/** A promise and the functions that settle it. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const settledTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the keys with writes not committed yet', () => {
  it('keeps a key pending until every write of it settled, committed or not, and leaves other keys free', async () => {
    const pending = createPendingKeys();
    const first = deferred();
    const second = deferred();
    pending.mark(['r:1', 's:1'], first.promise);
    pending.mark(['r:1'], second.promise);
    expect([pending.pending('r:1'), pending.pending('s:1'), pending.pending('r:2')]).toEqual([true, true, false]);
    first.resolve();
    await settledTurn();
    expect([pending.pending('r:1'), pending.pending('s:1')]).toEqual([true, false]);
    second.reject(new Error('rolled back'));
    await settledTurn();
    expect(pending.pending('r:1')).toBe(false);
  });

  it('holds every key while a write of unknown rows is under way', async () => {
    const pending = createPendingKeys();
    const write = deferred();
    pending.markUnknown(write.promise);
    expect(pending.pending('r:9')).toBe(true);
    write.resolve();
    await settledTurn();
    expect(pending.pending('r:9')).toBe(false);
  });
});

describe('lookups on the pool', () => {
  const byId = (id: string): PgMergeable<string, string | null> => ({
    key: 'thing-get',
    input: id,
    build: (ids) => ({ text: 'SELECT id FROM things WHERE id = ANY($1)', values: [[...new Set(ids)]] }),
    split: (rows: readonly { id: string }[], ids) => ids.map((id) => (rows.some((row) => row.id === id) ? id : null)),
  });

  it('shares one statement among the lookups of one kind requested in one event-loop turn, each getting its own answer', async () => {
    const sent: unknown[][] = [];
    const query = async (config: pg.QueryConfig) => {
      sent.push(config.values as unknown[]);
      return { rows: [{ id: 'a' }, { id: 'c' }] } as unknown as pg.QueryResult;
    };
    const lookup = createPoolLookups(query, (statement) => statement);
    const first = lookup(byId('a'));
    const second = Promise.resolve().then(() => lookup(byId('b')));
    const third = lookup(byId('c'));
    expect(await Promise.all([first, second, third])).toEqual(['a', null, 'c']);
    expect(sent).toEqual([[['a', 'c', 'b']]]);
    expect(await lookup(byId('a'))).toBe('a');
    expect(sent).toHaveLength(2);
  });

  it('rejects the lookups of a statement that failed', async () => {
    const lookup = createPoolLookups(
      () => Promise.reject(new Error('server gone')),
      (statement) => statement,
    );
    await expect(lookup(byId('a'))).rejects.toThrow('server gone');
  });
});

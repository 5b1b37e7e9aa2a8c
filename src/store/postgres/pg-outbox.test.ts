import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPgOutbox, type PgMergeable } from './pg-outbox.ts';

/** A client that answers each statement with one row per input id (those in `missing` left out) and records what it was sent. */
function fakeClient(missing: string[] = []) {
  const sent: Array<{ text: string; values: unknown[] }> = [];
  const client = {
    query(query: { text: string; values?: unknown[] } | string) {
      const config = typeof query === 'string' ? { text: query, values: [] } : { text: query.text, values: query.values ?? [] };
      sent.push(config);
      const ids = (config.values[0] as string[] | undefined) ?? [];
      return Promise.resolve({ rows: ids.filter((id) => !missing.includes(id)).map((id) => ({ id })) });
    },
  } as unknown as pg.ClientBase;
  return { client, sent };
}

const name = (query: { text: string; values: unknown[] }) => query as pg.QueryConfig;

function op(key: string, id: string, row?: string): PgMergeable<string, string> {
  return {
    key,
    row,
    input: id,
    build: (ids) => ({ text: `statement ${key}`, values: [ids] }),
    split: (rows: ReadonlyArray<{ id: string }>, ids) => ids.map((each) => (rows.some((row) => row.id === each) ? `found ${each}` : new Error(`no ${each}`))),
  };
}

describe('the outbox of a Postgres batch', () => {
  it('sends consecutive writes of one kind as one statement and gives each its own value', async () => {
    const { client, sent } = fakeClient();
    const outbox = createPgOutbox(client, name);
    const values = [outbox.merge(op('a', 'x')), outbox.merge(op('a', 'y')), outbox.merge(op('b', 'z')), outbox.merge(op('a', 'w'))];
    outbox.flush();
    expect(await Promise.all(values)).toEqual(['found x', 'found y', 'found z', 'found w']);
    expect(sent.map((query) => [query.text, query.values[0]])).toEqual([
      ['statement a', ['x', 'y']],
      ['statement b', ['z']],
      ['statement a', ['w']],
    ]);
  });

  it('never puts two writes of one row in one statement, and keeps a direct statement after the writes before it', async () => {
    const { client, sent } = fakeClient();
    const outbox = createPgOutbox(client, name);
    const values = [outbox.merge(op('a', 'x', 'run_1')), outbox.merge(op('a', 'y', 'run_1'))];
    void outbox.client.query('direct');
    outbox.flush();
    await Promise.all(values);
    expect(sent.map((query) => query.text)).toEqual(['statement a', 'statement a', 'direct']);
  });

  it('groups reads of one kind wherever they were asked for', async () => {
    const { client, sent } = fakeClient();
    const outbox = createPgOutbox(client, name);
    outbox.mode = 'grouped';
    const values = [outbox.merge(op('a', 'x')), outbox.merge(op('b', 'y')), outbox.merge(op('a', 'z'))];
    outbox.flush();
    expect(await Promise.all(values)).toEqual(['found x', 'found y', 'found z']);
    expect(sent.map((query) => [query.text, query.values[0]])).toEqual([
      ['statement a', ['x', 'z']],
      ['statement b', ['y']],
    ]);
  });

  it('rejects only the item its share of the answer refuses', async () => {
    const { client } = fakeClient(['y']);
    const outbox = createPgOutbox(client, name);
    const [first, second] = [outbox.merge(op('a', 'x')), outbox.merge(op('a', 'y'))];
    outbox.flush();
    await expect(first).resolves.toBe('found x');
    await expect(second).rejects.toThrow('no y');
  });

  it('sends a statement nobody flushed at the end of the microtask queue', async () => {
    const { client, sent } = fakeClient();
    const outbox = createPgOutbox(client, name);
    await expect(outbox.merge(op('a', 'x'))).resolves.toBe('found x');
    expect(sent).toHaveLength(1);
  });
});

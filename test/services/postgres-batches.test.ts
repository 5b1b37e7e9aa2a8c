import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardStatement } from '../../src/store/postgres/pg-batch-items.ts';
import { createPgBatches, type PgBatches } from '../../src/store/postgres/pg-batches.ts';
import { dropSchemas, freshSchema, postgresReason, postgresUrl } from './service-urls.ts';

/**
 * The Postgres store's writer sends a batch behind one not yet answered (pipelining): a batch
 * must not commit when the one before it rolled back, and batches commit in the order queued.
 */
describe.skipIf(!postgresUrl)(`postgres batches, pipelined${postgresReason}`, () => {
  const schema = freshSchema();
  const connect = async () => {
    const client = new pg.Client({ connectionString: postgresUrl, options: `-c search_path=${schema}`, pipeline: true, application_name: schema });
    await client.connect();
    return client;
  };
  let admin: pg.Client;
  const opened: PgBatches[] = [];

  function open(depth?: number): PgBatches {
    const batches = createPgBatches({ label: 'test', connect, storedSeqs: async () => new Map(), onRenumbered: () => {}, name: (query) => query, depth });
    opened.push(batches);
    return batches;
  }

  const insert =
    (value: string | null, sleepSeconds = 0) =>
    (client: pg.ClientBase) =>
      client.query(`INSERT INTO rows (v) SELECT $1::text FROM pg_sleep(${sleepSeconds})`, [value]).then(() => value);

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
  });

  afterAll(async () => {
    for (const batches of opened) await batches.close();
    await admin.end();
    await dropSchemas([schema]);
  });

  async function freshTable(): Promise<void> {
    await admin.query(`DROP TABLE IF EXISTS ${schema}.rows; CREATE TABLE ${schema}.rows (id bigserial PRIMARY KEY, v text NOT NULL)`);
  }

  const stored = async () => (await admin.query<{ v: string }>(`SELECT v FROM ${schema}.rows ORDER BY id`)).rows.map((row) => row.v);

  it('does not commit a batch sent behind one that rolled back: it commits after that one is retried', async () => {
    await freshTable();
    const batches = open();
    // The first batch sleeps on the server, then fails (a NULL); the second is sent behind it meanwhile.
    const first = batches.write(insert('a', 0.3));
    const failing = batches.write(insert(null));
    await new Promise((resolve) => setImmediate(resolve));
    const second = batches.write(insert('b'));
    await expect(first).resolves.toBe('a');
    await expect(failing).rejects.toMatchObject({ code: '23502' });
    await expect(second).resolves.toBe('b');
    // Had the second committed while the first rolled back, 'b' would have the lower id (the
    // first's retry takes a later one).
    expect(await stored()).toEqual(['a', 'b']);
  });

  it('keeps the order of many batches behind a failed one, reads seeing the writes before them', async () => {
    await freshTable();
    const batches = open(3);
    const results: Array<Promise<unknown>> = [batches.write(insert('a0', 0.2)), batches.write(insert(null))];
    for (let turn = 1; turn <= 4; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      results.push(batches.write(insert(`a${turn}`)));
    }
    const read = batches.read(async (client) => (await client.query<{ n: string }>('SELECT count(*) AS n FROM rows')).rows[0].n);
    const settled = await Promise.allSettled(results);
    expect(settled.map((each) => each.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(await read).toBe('5');
    expect(await stored()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
  });

  it('sends again, in order, the batches of a connection the server dropped under them', async () => {
    await freshTable();
    const batches = open();
    const first = batches.write(insert('a', 0.5));
    await new Promise((resolve) => setImmediate(resolve));
    const second = batches.write(insert('b'));
    // Once both are on the server's connection (the first sleeping), the server drops it.
    for (let tries = 0; ; tries++) {
      const { rowCount } = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE '%pg_sleep(0.5)%'",
        [schema],
      );
      if (rowCount) break;
      if (tries > 200) throw new Error('The first batch never reached the server.');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await expect(first).resolves.toBe('a');
    await expect(second).resolves.toBe('b');
    expect(await stored()).toEqual(['a', 'b']);
  });

  it('guard: a transaction fails when the one whose mark it checks was rolled back', async () => {
    const client = await connect();
    try {
      const run = async (statement: { text: string; values: unknown[] }, end: 'COMMIT' | 'ROLLBACK') => {
        await client.query('BEGIN');
        try {
          await client.query(statement);
        } finally {
          await client.query(end);
        }
      };
      await run(guardStatement({ expect: null, mark: 1 }), 'COMMIT');
      await run(guardStatement({ expect: 1, mark: 2 }), 'ROLLBACK');
      await expect(run(guardStatement({ expect: 2, mark: 3 }), 'COMMIT')).rejects.toThrow(/the batch sent before this one was rolled back \(mark 1, not 2\)/);
      await run(guardStatement({ expect: 1, mark: 4 }), 'COMMIT');
      await run(guardStatement({ expect: 4, mark: 5 }), 'COMMIT');
    } finally {
      await client.end();
    }
  });
});

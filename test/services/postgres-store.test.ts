import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { runStoreCases } from '../../src/store/store.case.ts';
import { eventFixture, runFixture, sessionFixture } from '../../src/store/store-fixtures.ts';
import { approvalFixture } from '../../src/store/store-approvals.case.ts';
import { openStore } from '../../src/store/open-store.ts';
import { pgMigrations } from '../../src/store/postgres/pg-migrations.ts';
import { runColumns, runToSql } from '../../src/store/core/run-rows.ts';
import { dropSchemas, freshSchema, postgresReason, postgresUrl, schemaUrl } from './service-urls.ts';

const schemas: string[] = [];
afterAll(() => dropSchemas(schemas));

function fresh(): string {
  const schema = freshSchema();
  schemas.push(schema);
  return schema;
}

describe.skipIf(!postgresUrl)(`postgres store${postgresReason}`, () => {
  const schemaOf = new WeakMap<object, string>();
  runStoreCases(
    'the shared store cases on postgres',
    async () => {
      const schema = fresh();
      const store = await openPostgresStore({ connectionString: postgresUrl!, schema });
      schemaOf.set(store, schema);
      return store;
    },
    {
      async reopen(store) {
        const schema = schemaOf.get(store)!;
        await store.close();
        const reopened = await openPostgresStore({ connectionString: postgresUrl!, schema });
        schemaOf.set(reopened, schema);
        return reopened;
      },
      async writeTextActivity(store, runId, text) {
        await store.flush();
        const pg = (await import('pg')).default;
        const client = new pg.Client({ connectionString: postgresUrl });
        await client.connect();
        await client.query(`UPDATE ${schemaOf.get(store)!}.runs SET last_activity = $1 WHERE id = $2`, [text, runId]);
        await client.end();
      },
      async storedContent(store, sessionId, seq) {
        await store.flush();
        const pg = (await import('pg')).default;
        const client = new pg.Client({ connectionString: postgresUrl });
        await client.connect();
        try {
          const { rows } = await client.query(`SELECT content FROM ${schemaOf.get(store)!}.messages WHERE session_id = $1 AND seq = $2`, [sessionId, seq]);
          return rows[0].content as string;
        } finally {
          await client.end();
        }
      },
    },
  );

  it('is opened by openStore from a postgres:// URL, with the schema from ?schema= and no password in its description', async () => {
    const schema = fresh();
    const url = new URL(schemaUrl(schema));
    url.password = 'secret-password';
    const store = await openStore(schemaUrl(schema));
    expect(store.description).toMatch(/^postgres:/);
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await store.close();
    const again = await openStore(schemaUrl(schema));
    expect((await again.getRun('run_1'))?.id).toBe('run_1');
    await again.close();
    expect(url.toString()).toContain('secret-password');
  });

  it('lets exactly one of two processes (two stores on one database) win a transition, and keeps seqs consecutive across them', async () => {
    const schema = fresh();
    const first = await openPostgresStore({ connectionString: postgresUrl!, schema });
    const second = await openPostgresStore({ connectionString: postgresUrl!, schema });
    await first.insertRun(runFixture({ status: 'running' }), eventFixture('run_1', 'run-start'));
    const end = (store: typeof first, to: 'completed' | 'canceled_by_user') =>
      store.transitionRun({ id: 'run_1', from: ['running'], to, event: eventFixture('run_1', 'run-end', { status: to }) });
    const results = await Promise.all([end(first, 'completed'), end(second, 'canceled_by_user')]);
    expect(results.filter((result) => result !== null)).toHaveLength(1);
    await Promise.all(
      Array.from({ length: 40 }, (_, index) => (index % 2 ? first : second).appendRunEvents([eventFixture('run_1', 'activity', { text: `a${index}` })])),
    );
    // An append resolves before its commit (group commit); flush() waits for it.
    await Promise.all([first.flush(), second.flush()]);
    const events = await first.listRunEvents('run_1');
    expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 42 }, (_, index) => index + 1));
    await Promise.all([first.close(), second.close()]);
  });

  it('rejects alone a write the database refuses in a batch, and commits the writes held and queued with it', async () => {
    const schema = fresh();
    const store = await openPostgresStore({ connectionString: postgresUrl!, schema });
    await store.createSession(sessionFixture({ id: 'ses_1' }));
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await store.insertApproval(approvalFixture({ id: 'apr_1' }));
    // One event-loop turn: held appends around a duplicate ask (a unique violation aborts the
    // batch's transaction; the batch runs again write by write).
    const before = store.appendRunEvents([eventFixture('run_1', 'activity', { text: 'before' })]);
    const message = store.appendMessages([{ session_id: 'ses_1', role: 'user', content: 'hello', created_at: '2025-01-01T00:00:09.000Z' }]);
    const duplicate = store.insertApproval(approvalFixture({ id: 'apr_1' }));
    const moved = store.transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
    const after = store.appendRunEvents([eventFixture('run_1', 'activity', { text: 'after' })]);
    await expect(duplicate).rejects.toMatchObject({ code: '23505' });
    await Promise.all([before, message, after]);
    expect((await moved)?.status).toBe('running');
    await store.close();
    const reopened = await openPostgresStore({ connectionString: postgresUrl!, schema });
    expect((await reopened.listRunEvents('run_1')).map((event) => [event.seq, event.type, event.data.text])).toEqual([
      [1, 'run-queued', undefined],
      [2, 'activity', 'before'],
      [3, 'run-start', undefined],
      [4, 'activity', 'after'],
    ]);
    expect((await reopened.listMessages('ses_1')).map((stored) => [stored.seq, stored.content])).toEqual([[1, 'hello']]);
    await reopened.close();
  });

  it('gives each of many writes and reads made in one event-loop turn its own outcome, though they share statements', async () => {
    const store = await openPostgresStore({ connectionString: postgresUrl!, schema: fresh() });
    await store.insertRun(runFixture({ id: 'run_0' }), eventFixture('run_0', 'run-queued'));
    await store.createSession(sessionFixture({ id: 'ses_0' }));
    const ids = ['run_1', 'run_2', 'run_3', 'run_4'];
    // One turn: new sessions and runs (one of each with an id already stored), then moves, two of them refused.
    const sessions = ['ses_1', 'ses_0', 'ses_2'].map((id) => store.createSession(sessionFixture({ id })));
    const inserted = ['run_0', ...ids].map((id) => store.insertRun(runFixture({ id, status: 'queued' }), eventFixture(id, 'run-queued')));
    await expect(sessions[1]).rejects.toThrow(/already stored/);
    await expect(inserted[0]).rejects.toThrow(/already stored/);
    await Promise.all([sessions[0], sessions[2], ...inserted.slice(1)]);
    await store.transitionRun({ id: 'run_4', from: ['queued'], to: 'canceled_by_user', event: eventFixture('run_4', 'run-end') });
    const moves = ids.map((id, index) =>
      store.transitionRun({ id, from: index === 2 ? ['running'] : ['queued'], to: 'running', patch: { turns: index }, event: eventFixture(id, 'run-start') }),
    );
    const [runs, found] = [await Promise.all(moves), await Promise.all([...ids, 'run_9'].map((id) => store.getRun(id)))];
    expect(runs.map((run) => run && [run.id, run.status, run.turns])).toEqual([['run_1', 'running', 0], ['run_2', 'running', 1], null, null]);
    expect(found.map((run) => run?.status ?? null)).toEqual(['running', 'running', 'queued', 'canceled_by_user', null]);
    expect((await store.listRunEvents('run_2')).map((event) => [event.seq, event.type])).toEqual([
      [1, 'run-queued'],
      [2, 'run-start'],
    ]);
    expect((await store.listRunEvents('run_3')).map((event) => event.type)).toEqual(['run-queued']);
    const message = (session_id: string, content: string) => ({ session_id, role: 'user' as const, content, created_at: '2025-01-01T00:00:09.000Z' });
    await store.appendMessages([message('ses_1', 'a'), message('ses_1', 'b'), message('ses_2', 'c')]);
    const [all, after, other, none, session, missing] = await Promise.all([
      store.listMessages('ses_1'),
      store.listMessages('ses_1', { afterSeq: 1 }),
      store.listMessages('ses_2'),
      store.listMessages('ses_9'),
      store.getSession('ses_2'),
      store.getSession('ses_9'),
    ]);
    expect([all, after, other, none].map((list) => list.map((stored) => stored.content))).toEqual([['a', 'b'], ['b'], ['c'], []]);
    expect([session?.id, missing]).toEqual(['ses_2', null]);
    await store.close();
  });

  it('stops taking writes, and says so, once a write it acknowledged cannot be committed', async () => {
    const store = await openPostgresStore({ connectionString: postgresUrl!, schema: fresh() });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    const failures: unknown[] = [];
    store.onFailure!((failure) => failures.push(failure));
    // Postgres refuses a NUL character in text; the append was acknowledged before its commit.
    await store.appendRunEvents([{ ...eventFixture('run_1', 'activity'), at: 'bad\u0000time' }]);
    await expect(store.flush()).rejects.toMatchObject({ name: 'CadreStoreFailureError' });
    expect(failures).toHaveLength(1);
    await expect(store.appendRunEvents([eventFixture('run_1', 'activity')])).rejects.toMatchObject({ name: 'CadreStoreFailureError' });
    expect((await store.getRun('run_1'))?.id).toBe('run_1');
    await store.close();
  });

  it('opens a new schema from several connections at once (workers started together), each store working', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const schema = fresh();
      const stores = await Promise.all(Array.from({ length: 6 }, () => openPostgresStore({ connectionString: postgresUrl!, schema })));
      await stores[0]!.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
      await stores[0]!.flush();
      expect((await stores[5]!.getRun('run_1'))?.id).toBe('run_1');
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('reads a database of schema version 1 (a row per event) the same after the upgrade, and appends after its events', async () => {
    const schema = fresh();
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: postgresUrl, options: `-c search_path=${schema}` });
    await client.connect();
    // The database as the previous build left it: schema 1, and events stored a row each.
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.query(pgMigrations[0].sql);
    await client.query('CREATE TABLE cadre_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    await client.query("INSERT INTO cadre_schema_migrations VALUES (1, 'first', 'then')");
    const old = Array.from({ length: 6 }, (_, index) => ({
      seq: index + 1,
      at: `2025-01-01T00:00:0${index}.000Z`,
      type: index === 0 ? 'run-start' : 'activity',
      data: { text: `old ${index}`, quote: '"\\' },
    }));
    for (const event of old) {
      await client.query('INSERT INTO run_events (run_id, seq, at, type, data) VALUES ($1, $2, $3, $4, $5)', [
        'run_1',
        event.seq,
        event.at,
        event.type,
        JSON.stringify(event.data),
      ]);
    }
    // Only the columns schema 1 has: later versions add some (forked_from).
    const { rows: present } = await client.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'runs'",
      [schema],
    );
    const columns = new Set(present.map((row) => row.column_name));
    const values = (runToSql(runFixture({ status: 'running' })) as unknown[]).filter((_, index) => columns.has(runColumns[index]));
    const names = runColumns.filter((column) => columns.has(column)).join(', ');
    await client.query(`INSERT INTO runs (${names}) VALUES (${values.map((_, index) => `$${index + 1}`).join(', ')})`, values);
    const store = await openPostgresStore({ connectionString: postgresUrl!, schema });
    const expected = old.map((event) => ({ run_id: 'run_1', ...event }));
    expect(await store.listRunEvents('run_1')).toEqual(expected);
    expect(await store.listRunEvents('run_1', { afterSeq: 2, limit: 3 })).toEqual(expected.slice(2, 5));
    // The first append learns the last seq from the stored rows; later ones are held and packed.
    await store.appendRunEvents([eventFixture('run_1', 'activity', { text: 'new 0' })]);
    await store.appendRunEvents(Array.from({ length: 4 }, (_, index) => eventFixture('run_1', 'activity', { text: `new ${index + 1}` })));
    await store.flush();
    const { rows } = await client.query<{ seq: number; last_seq: number | null }>(
      "SELECT seq, last_seq FROM run_event_rows WHERE run_id = 'run_1' ORDER BY seq",
    );
    expect(rows).toEqual([...[1, 2, 3, 4, 5, 6, 7].map((seq) => ({ seq, last_seq: null as number | null })), { seq: 8, last_seq: 11 }]);
    const events = await store.listRunEvents('run_1');
    expect(events.map((event) => [event.seq, event.data.text])).toEqual([
      ...old.map((event) => [event.seq, event.data.text]),
      [7, 'new 0'],
      [8, 'new 1'],
      [9, 'new 2'],
      [10, 'new 3'],
      [11, 'new 4'],
    ]);
    expect(events.slice(0, 6)).toEqual(expected);
    expect((await store.listRunEvents('run_1', { afterSeq: 8 })).map((event) => event.seq)).toEqual([9, 10, 11]);
    // A transition after packed rows takes the seq after the last one.
    await store.transitionRun({ id: 'run_1', from: ['running'], to: 'completed', event: eventFixture('run_1', 'run-end') });
    expect((await store.listRunEvents('run_1', { afterSeq: 10 })).map((event) => [event.seq, event.type])).toEqual([
      [11, 'activity'],
      [12, 'run-end'],
    ]);
    expect((await client.query('SELECT MAX(version) AS version FROM cadre_schema_migrations')).rows[0].version).toBe(pgMigrations.at(-1)!.version);
    // An older cadre still running on the database fails at its next event (its table is gone),
    // instead of taking MAX(seq) + 1, a seq inside a packed row.
    await expect(
      client.query(
        "INSERT INTO run_events (run_id, seq, at, type, data) SELECT 'run_1', COALESCE(MAX(seq), 0) + 1, 'now', 'activity', '{}' FROM run_events WHERE run_id = 'run_1'",
      ),
    ).rejects.toThrow(/relation "run_events" does not exist/);
    await client.end();
    await store.close();
  });

  it('stores texts exactly, quotes, backslashes, braces, NULL as text and non-ASCII included, whether held or written after a read', async () => {
    const schema = fresh();
    const store = await openPostgresStore({ connectionString: postgresUrl!, schema });
    const texts = ['"quoted"', 'back\\slash \\" both', '{braces,comma}', 'NULL', '', 'é 中 😀', ' \t\n '];
    await store.createSession(sessionFixture({ id: 'ses_1' }));
    await store.insertRun(runFixture({ status: 'running' }), eventFixture('run_1', 'run-start'));
    // Held: this process wrote the session and the run.
    await store.appendMessages(texts.map((text) => ({ session_id: 'ses_1', role: 'user' as const, content: text, created_at: '2025-01-01T00:00:02.000Z' })));
    await store.appendRunEvents(texts.map((text) => eventFixture('run_1', 'activity', { text })));
    await store.patchRun('run_1', { description: texts[1], partial_result: texts[2] });
    await store.flush();
    // Another store (process) writes after reading: its appends take their seqs in SQL.
    const other = await openPostgresStore({ connectionString: postgresUrl!, schema });
    await other.appendRunEvents(texts.map((text) => eventFixture('run_1', 'activity', { text: `other ${text}` })));
    await other.updateRun('run_1', { task: texts[5] });
    await other.close();
    expect((await store.listMessages('ses_1')).map((message) => message.content)).toEqual(texts);
    const events = await store.listRunEvents('run_1');
    expect(events.slice(1).map((event) => event.data.text)).toEqual([...texts, ...texts.map((text) => `other ${text}`)]);
    const run = (await store.getRun('run_1'))!;
    expect([run.description, run.partial_result, run.task]).toEqual([texts[1], texts[2], texts[5]]);
    await store.close();
  });

  it('refuses a database whose schema is newer than this build', async () => {
    const schema = fresh();
    const store = await openPostgresStore({ connectionString: postgresUrl!, schema });
    await store.close();
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    await client.query(`INSERT INTO ${schema}.cadre_schema_migrations (version, name, applied_at) VALUES (99, 'future', 'now')`);
    await client.end();
    await expect(openPostgresStore({ connectionString: postgresUrl!, schema })).rejects.toThrow(/schema version 99, newer than this build/);
  });
});

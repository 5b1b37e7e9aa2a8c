/** The SQLite store's write-behind: held rows, seq counters, known runs and sessions, asynchronous commit. */
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { eventFixture, runFixture, sessionFixture } from '../store-fixtures.ts';
import { createSqliteStore, seqCacheSize } from './sqlite-store.ts';
import { countStatements, testFiles } from './sqlite-test-support.ts';

const newFile = testFiles('cadre-sqlite-held-');

describe('sqlite store seq counters', () => {
  it('forgets the counters of the oldest sessions and runs past its bound, and reads them again', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const message = (session_id: string) => ({ session_id, role: 'user' as const, content: 'hi', created_at: '2025-01-01T00:00:00.000Z' });
    await store.insertRun(runFixture({ id: 'run_first' }), eventFixture('run_first', 'run-queued'));
    await store.createSession(sessionFixture({ id: 'ses_first' }));
    await store.appendMessages([message('ses_first')]);
    // Enough newer sessions and runs to push the first ones out of memory.
    for (let index = 0; index < seqCacheSize; index++) {
      void store.createSession(sessionFixture({ id: `ses_${index}` }));
      void store.insertRun(runFixture({ id: `run_${index}` }), eventFixture(`run_${index}`, 'run-queued'));
    }
    await store.flush();
    const [second] = await store.appendMessages([message('ses_first')]);
    expect(second.seq).toBe(2);
    const event = eventFixture('run_first', 'activity');
    await store.appendRunEvents([event]);
    expect(event.seq).toBe(2);
    expect((await store.listRunEvents('run_first')).map((stored) => stored.seq)).toEqual([1, 2]);
    await store.close();
  });
});

describe('sqlite store asynchronous commit', () => {
  const message = (content: string) => ({ session_id: 'ses_child_run_1', role: 'assistant' as const, content, created_at: '2025-01-01T00:00:01.000Z' });

  it('shows held messages, events and step fields to its own reads, and to other connections only once committed', async () => {
    const path = newFile();
    // The transaction may stay open as long as this turn lasts: a loaded machine can take longer
    // than the default 20 ms between these writes, which would commit them early.
    const store = createSqliteStore({ path, maxBatchMs: 60_000 });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await store.flush();
    const other = createSqliteStore({ path });

    const [stored] = await store.appendMessages([message('step one')]);
    await store.appendRunEvents([eventFixture('run_1', 'step-start')]);
    expect(
      await store.patchRun('run_1', { turns: 1, usage: { input_tokens: 3, output_tokens: 4 } }, [eventFixture('run_1', 'activity', { text: 'reading' })]),
    ).toBe(true);
    // The step fields are held in memory, laid over what reads return.
    expect((await store.getRun('run_1'))?.turns).toBe(1);
    expect((await store.listRuns({ statuses: ['queued'] }))[0].usage).toEqual({ input_tokens: 3, output_tokens: 4 });
    // Lifecycle events are held with the step events, in the order they came.
    await store.transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
    await store.appendRunEvents([eventFixture('run_1', 'step-start')]);

    expect(stored.seq).toBe(1);
    expect((await store.listMessages('ses_child_run_1')).map((each) => each.content)).toEqual(['step one']);
    expect((await store.getRun('run_1'))?.turns).toBe(1);
    expect((await store.listRuns({ statuses: ['running'] }))[0].usage).toEqual({ input_tokens: 3, output_tokens: 4 });
    const types = ['run-queued', 'step-start', 'activity', 'run-start', 'step-start'];
    expect((await store.listRunEvents('run_1')).map((event) => [event.seq, event.type])).toEqual(types.map((type, index) => [index + 1, type]));
    expect((await store.listRunEvents('run_1', { afterSeq: 1, limit: 2 })).map((event) => event.type)).toEqual(['step-start', 'activity']);

    expect(await other.listMessages('ses_child_run_1')).toEqual([]);
    expect((await other.getRun('run_1'))?.turns).toBe(0);
    await store.flush();
    expect((await other.listMessages('ses_child_run_1')).map((each) => each.content)).toEqual(['step one']);
    expect(await other.getRun('run_1')).toMatchObject({ status: 'running', turns: 1, usage: { input_tokens: 3, output_tokens: 4 } });
    expect((await other.listRunEvents('run_1')).map((event) => event.type)).toEqual(types);
    await Promise.all([store.close(), other.close()]);
  });

  it('commits a notification message and its delivery marks together, even when every write gets its own transaction', async () => {
    const path = newFile();
    // maxBatchMs 0: each write commits the transaction before it, so only one write can hold both.
    const store = createSqliteStore({ path, maxBatchMs: 0 });
    const at = '2025-01-01T00:00:05.000Z';
    await store.insertRun(
      runFixture({ mode: 'background', status: 'completed', notification: { delivered_at: null, suppressed: false } }),
      eventFixture('run_1', 'run-queued'),
    );
    await store.flush();
    const other = createSqliteStore({ path });
    const delivery = store.commitMessage({
      session_id: 'ses_1',
      role: 'user',
      content: '<subagent-notification>',
      created_at: at,
      runs: [{ id: 'run_1', check: () => true, patch: { notification: { delivered_at: at, suppressed: false } }, events: () => [] }],
    });
    // Another write right after it commits it, whole.
    await store.appendRunEvents([eventFixture('run_1', 'activity')]);
    await delivery;
    expect((await other.listMessages('ses_1')).map((message) => message.content)).toEqual(['<subagent-notification>']);
    expect((await other.getRun('run_1'))?.notification?.delivered_at).toBe(at);
    await Promise.all([store.close(), other.close()]);
  });

  it('updates the content of a held message before it is written', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const [stored] = await store.appendMessages([message('first')]);
    await store.updateMessageContent(stored.session_id, stored.seq, 'first, and a second');
    await store.flush();
    expect((await store.listMessages(stored.session_id)).map((each) => each.content)).toEqual(['first, and a second']);
    await store.close();
  });

  it('writes held step fields before a change of the same run, so the later change wins', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.insertRun(runFixture({ status: 'running' }), eventFixture('run_1', 'run-start'));
    await store.patchRun('run_1', { turns: 2, activity: { kind: 'text', text: 'reading' } });
    const ended = await store.transitionRun({
      id: 'run_1',
      from: ['running'],
      to: 'completed',
      patch: { activity: { kind: 'text', text: 'done' } },
      event: eventFixture('run_1', 'run-end'),
    });
    expect(ended).toMatchObject({ status: 'completed', turns: 2, last_activity: 'done' });
    await store.flush();
    expect(await store.getRun('run_1')).toMatchObject({ turns: 2, activity: { kind: 'text', text: 'done' } });
    await store.close();
  });

  it('holds the events of a patch that sets no field, and commits them', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    expect(await store.patchRun('run_1', { turns: undefined }, [eventFixture('run_1', 'activity', { text: 'reading' })])).toBe(true);
    expect(await store.patchRun('run_unknown', {})).toBe(false);
    await store.flush();
    expect((await store.listRunEvents('run_1')).map((event) => event.type)).toEqual(['run-queued', 'activity']);
    expect((await store.getRun('run_1'))?.turns).toBe(0);
    await store.close();
  });

  it('writes a run once per commit however often it changed, and reads it again in the next transaction', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    await store.flush();
    const other = new DatabaseSync(path);
    other.exec(`
      CREATE TABLE writes (op TEXT, turns INTEGER);
      CREATE TRIGGER log_insert AFTER INSERT ON runs BEGIN INSERT INTO writes VALUES ('insert', NEW.turns); END;
      CREATE TRIGGER log_update AFTER UPDATE ON runs BEGIN INSERT INTO writes VALUES ('update', NEW.turns); END;
    `);
    const writes = () =>
      other
        .prepare('SELECT op, turns FROM writes')
        .all()
        .map((row) => `${row.op} ${row.turns}`);

    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await store.transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
    await store.patchRun('run_1', { turns: 1 });
    await store.patchRun('run_1', { turns: 2, activity: { kind: 'text', text: 'reading' } });
    // A refused move changes nothing.
    expect(await store.transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') })).toBeNull();
    await store.flush();
    expect(writes()).toEqual(['insert 2']);

    // Another process asks for a stop between two transactions: the next one sees it.
    other.exec(`UPDATE runs SET stop_requested_at = '2025-01-01T00:00:09.000Z', stop_requested_by = 'user' WHERE id = 'run_1'`);
    await store.patchRun('run_1', { turns: 3 });
    const ended = await store.transitionRun({
      id: 'run_1',
      from: ['running'],
      to: 'canceled_by_user',
      patch: { activity: { kind: 'text', text: 'stopped' } },
      event: eventFixture('run_1', 'run-end'),
    });
    expect(ended).toMatchObject({ status: 'canceled_by_user', turns: 3, stop_requested_by: 'user' });
    const read = await store.updateRun('run_1', { consumed_at: '2025-01-01T00:00:10.000Z' });
    await store.flush();
    expect(writes()).toEqual(['insert 2', 'update 2', 'update 3']);
    expect(other.prepare('SELECT status, turns, last_activity, stop_requested_by, consumed_at FROM runs').get()).toEqual({
      status: 'canceled_by_user',
      turns: 3,
      // The column keeps the typed value; its text is rendered when read.
      last_activity: '{"kind":"text","text":"stopped"}',
      stop_requested_by: 'user',
      consumed_at: read?.consumed_at,
    });
    other.close();
    await store.close();
  });

  it('does not read back a run it wrote while no other connection changed the file, and reads it once one did', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await store.flush();
    const reads = countStatements(/^SELECT id, parent_session_id/);
    await store.transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
    await store.flush();
    await store.patchRun('run_1', { turns: 1 });
    await store.flush();
    expect(await store.getRun('run_1')).toMatchObject({ status: 'running', turns: 1 });
    const ended = await store.transitionRun({ id: 'run_1', from: ['running'], to: 'completed', event: eventFixture('run_1', 'run-end') });
    expect(ended).toMatchObject({ status: 'completed', turns: 1 });
    await store.flush();
    expect(reads.stop()).toBe(0);

    const other = new DatabaseSync(path);
    other.exec(`UPDATE runs SET consumed_at = '2025-01-01T00:00:09.000Z' WHERE id = 'run_1'`);
    other.close();
    const again = countStatements(/^SELECT id, parent_session_id/);
    expect(await store.getRun('run_1')).toMatchObject({ status: 'completed', consumed_at: '2025-01-01T00:00:09.000Z' });
    expect(await store.updateRun('run_1', { turns: 2 })).toMatchObject({ turns: 2, consumed_at: '2025-01-01T00:00:09.000Z' });
    expect(again.stop()).toBe(2);
    await store.close();
  });

  it('reads back no session it wrote while no other connection changed the file, and sees one that did', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    await store.createSession(sessionFixture({ id: 'ses_1' }));
    await store.flush();
    const reads = countStatements(/^SELECT \* FROM sessions/);
    expect(await store.getSession('ses_1')).toEqual(sessionFixture({ id: 'ses_1' }));
    await store.updateSession('ses_1', { status: 'running' });
    await store.flush();
    expect(await store.getSession('ses_1')).toEqual(sessionFixture({ id: 'ses_1', status: 'running' }));
    expect(reads.stop()).toBe(0);
    const other = new DatabaseSync(path);
    other.exec(`UPDATE sessions SET user_canceled_at = '2025-01-01T00:00:09.000Z' WHERE id = 'ses_1'`);
    other.close();
    expect(await store.getSession('ses_1')).toEqual(sessionFixture({ id: 'ses_1', status: 'running', user_canceled_at: '2025-01-01T00:00:09.000Z' }));
    await store.close();
  });

  it('commits a transaction that grew older than maxBatchMs without waiting for the event loop', async () => {
    const path = newFile();
    const store = createSqliteStore({ path, maxBatchMs: 5 });
    const other = new DatabaseSync(path);
    void store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    const until = performance.now() + 10;
    while (performance.now() < until) {
      // A chain of work that never yields to the event loop.
    }
    void store.appendRunEvents([eventFixture('run_1', 'step-start')]);
    expect(other.prepare('SELECT id FROM runs').all()).toEqual([{ id: 'run_1' }]);
    other.close();
    await store.close();
  });

  it('stops taking writes once a commit failed, and says the uncommitted writes were lost', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await store.flush();
    const other = new DatabaseSync(path);
    other.exec(`CREATE TRIGGER refuse_message BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'disk trouble'); END`);
    other.close();
    // Held until the commit, so the write itself succeeds.
    await store.appendMessages([message('lost')]);
    await store.patchRun('run_1', { turns: 1 });
    await expect(store.flush()).rejects.toThrow(/could not commit \(disk trouble\); the writes since the previous commit were lost/);
    await expect(store.appendRunEvents([eventFixture('run_1', 'step-start')])).rejects.toThrow(/could not commit/);
    await expect(store.flush()).rejects.toThrow(/could not commit/);
    // What was committed before is intact, and nothing held survives in memory.
    expect(await store.listMessages('ses_child_run_1')).toEqual([]);
    expect(await store.getRun('run_1')).toMatchObject({ status: 'queued', turns: 0 });
    await store.close().catch(() => {});
  });
});

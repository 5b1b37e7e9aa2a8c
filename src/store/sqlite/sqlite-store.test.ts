import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../errors/config-error.ts';
import type { Store } from '../store.ts';
import { runStoreCases } from '../store.case.ts';
import { eventFixture, runFixture, sessionFixture } from '../store-fixtures.ts';
import { migrations } from './migrations.ts';
import { countInserts, testFiles } from './sqlite-test-support.ts';
import { createSqliteStore } from './sqlite-store.ts';

const newFile = testFiles('cadre-sqlite-');

const pathOf = new WeakMap<Store, string>();

runStoreCases('sqlite store in memory', async () => createSqliteStore({ path: ':memory:' }));

runStoreCases(
  'sqlite store in a file',
  async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    pathOf.set(store, path);
    return store;
  },
  {
    async reopen(store) {
      const path = pathOf.get(store)!;
      await store.close();
      const reopened = createSqliteStore({ path });
      pathOf.set(reopened, path);
      return reopened;
    },
    async writeTextActivity(store, runId, text) {
      await store.flush();
      const database = new DatabaseSync(pathOf.get(store)!);
      database.prepare('UPDATE runs SET last_activity = ? WHERE id = ?').run(text, runId);
      database.close();
    },
    async storedContent(store, sessionId, seq) {
      await store.flush();
      const database = new DatabaseSync(pathOf.get(store)!, { readOnly: true });
      try {
        return (database.prepare('SELECT content FROM messages WHERE session_id = ? AND seq = ?').get(sessionId, seq) as { content: string }).content;
      } finally {
        database.close();
      }
    },
  },
);

describe('sqlite store across connections', () => {
  it('shows committed data to a second store on the same file after flush', async () => {
    const path = newFile();
    const writer = createSqliteStore({ path });
    const reader = createSqliteStore({ path });
    void writer.createSession(sessionFixture());
    void writer.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await writer.flush();
    expect(await reader.getSession('ses_1')).toEqual(sessionFixture());
    expect((await reader.listRunEvents('run_1')).map((event) => event.type)).toEqual(['run-queued']);
    await reader.updateRun('run_1', { stop_requested_at: '2025-01-01T00:00:09.000Z', stop_requested_by: 'user' });
    // The write is applied, not yet committed: the other connection sees it after the flush.
    expect(await writer.listRuns({ stop_requested: true })).toEqual([]);
    await reader.flush();
    expect((await writer.listRuns({ stop_requested: true })).map((run) => run.id)).toEqual(['run_1']);
    await Promise.all([writer.close(), reader.close()]);
  });

  it('releases the write lock within one event-loop turn, so another process can write', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    const inserted = store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await new Promise((resolve) => setImmediate(resolve));
    const other = new DatabaseSync(path, { timeout: 0 });
    other.exec("UPDATE runs SET stop_requested_at = 'now' WHERE id = 'run_1'");
    other.close();
    await inserted;
    expect((await store.getRun('run_1'))?.stop_requested_at).toBe('now');
    await store.close();
  });

  it('lets another process write stop requests while this one commits a steady stream of writes', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    const runs = Array.from({ length: 50 }, (_, index) => runFixture({ id: `run_${index}`, status: 'running' }));
    await Promise.all(runs.map((run) => store.insertRun(run, eventFixture(run.id, 'run-queued'))));
    const storeModule = fileURLToPath(new URL('./sqlite-store.ts', import.meta.url));
    const stopper = `
      const { createSqliteStore } = await import(${JSON.stringify(storeModule)});
      const store = createSqliteStore({ path: ${JSON.stringify(path)} });
      for (let index = 0; index < 25; index++) {
        await store.updateRun('run_' + index, { stop_requested_at: 'now', stop_requested_by: 'user' });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await store.close();`;
    const child = spawn(process.execPath, ['--input-type=module', '--eval', stopper], { stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk) => (errors += String(chunk)));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let childDone = false;
    void exited.then(() => (childDone = true));
    let turn = 0;
    while (!childDone) {
      turn++;
      await Promise.all(runs.map((run) => store.updateRun(run.id, { turns: turn }, [eventFixture(run.id, 'activity')])));
      // Writes resolve without waiting for their commit, so the loop lets the event loop turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect({ code: await exited, errors: errors.replace(/.*ExperimentalWarning.*\n?/g, '') }).toEqual({ code: 0, errors: '' });
    expect(await store.listRuns({ stop_requested: true })).toHaveLength(25);
    expect((await store.getRun('run_0'))?.turns).toBe(turn);
    await store.close();
    // A starved writer never finishes; a busy machine only makes the child's start slow (seconds).
  }, 30_000);

  it("lets a second store of this process write while the first one's transaction is open, without waiting for the lock", async () => {
    const path = newFile();
    const first = createSqliteStore({ path, busyTimeoutMs: 300 });
    const second = createSqliteStore({ path, busyTimeoutMs: 300 });
    await first.createSession(sessionFixture({ id: 'ses_1' }));
    // The first store's transaction is open until the end of this event-loop turn; the second
    // one's write must not wait for it (the thread it would wait on is this one).
    const started = performance.now();
    await second.createSession(sessionFixture({ id: 'ses_2' }));
    await first.createSession(sessionFixture({ id: 'ses_3' }));
    expect(performance.now() - started).toBeLessThan(250);
    await Promise.all([first.flush(), second.flush()]);
    const reader = createSqliteStore({ path });
    expect((await reader.listSessions()).map((session) => session.id).sort()).toEqual(['ses_1', 'ses_2', 'ses_3']);
    await Promise.all([reader.close(), first.close(), second.close()]);
  });

  it('continues the seq of a run another process appended events to', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await store.flush();
    const other = new DatabaseSync(path);
    other.exec(`INSERT INTO run_events (run_id, seq, at, type, data) VALUES ('run_1', 2, 'x', 'warning', '{}')`);
    other.close();
    const moved = await store.transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
    expect(moved?.status).toBe('running');
    // The held event took the next seq this store knew of; its commit moves it past the stored one.
    await store.flush();
    expect((await store.listRunEvents('run_1')).map((event) => [event.seq, event.type])).toEqual([
      [1, 'run-queued'],
      [2, 'warning'],
      [3, 'run-start'],
    ]);
    await store.close();
  });

  it("writes a commit's events and messages with one INSERT each, all of them, in seq order", async () => {
    const path = newFile();
    // One transaction however slow the machine: its writes never wait for the event loop.
    const store = createSqliteStore({ path, maxBatchMs: 60_000 });
    await store.createSession(sessionFixture({ id: 'ses_1' }));
    for (const id of ['run_1', 'run_2', 'run_3']) await store.insertRun(runFixture({ id }), eventFixture(id, 'run-queued'));
    await store.flush();
    const inserts = countInserts();
    for (let step = 1; step <= 4; step++) {
      for (const id of ['run_1', 'run_2', 'run_3'])
        await store.appendRunEvents([eventFixture(id, 'step-start', { step }), eventFixture(id, 'tool-call-start', { tool: 'noop', label: 'noop' })]);
      await store.appendMessages([{ session_id: 'ses_1', role: 'user', content: `step ${step}`, created_at: '2025-01-01T00:00:03.000Z' }]);
    }
    await store.flush();
    expect(inserts.stop()).toEqual({ run_events: 1, messages: 1 });
    const reader = createSqliteStore({ path });
    for (const id of ['run_1', 'run_2', 'run_3']) {
      const events = await reader.listRunEvents(id);
      expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(events.slice(1).map((event) => [event.type, event.data])).toEqual(
        [1, 2, 3, 4].flatMap((step) => [
          ['step-start', { step }],
          ['tool-call-start', { tool: 'noop', label: 'noop' }],
        ]),
      );
    }
    expect((await reader.listMessages('ses_1')).map((message) => [message.seq, message.content])).toEqual([1, 2, 3, 4].map((step) => [step, `step ${step}`]));
    await reader.close();
    await store.close();
  });

  it("stores a commit's events of a run in one row, read back by seq from any event, beside rows of one event", async () => {
    const path = newFile();
    const store = createSqliteStore({ path, maxBatchMs: 60_000 });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await store.flush();
    // A row of one event, as a database of an earlier schema holds them.
    const other = new DatabaseSync(path);
    other.exec(`INSERT INTO run_events (run_id, seq, at, type, data) VALUES ('run_1', 2, '2025-01-01T00:00:03.000Z', 'warning', '{"kind":"recovered"}')`);
    // Events as objects, as the first build of schema 6 wrote them.
    other.exec(
      `INSERT INTO run_events (run_id, seq, at, type, data, last_seq) VALUES ('run_0', 1, 'a', 'events', '[{"at":"a","type":"run-queued","data":{}},{"at":"b","type":"run-start","data":{}}]', 2)`,
    );
    other.close();
    const steps = [1, 2, 3].flatMap((step) => [
      eventFixture('run_1', 'step-start', { step }),
      eventFixture('run_1', 'tool-call-start', { tool: 'noop', label: `noop ${step}` }),
    ]);
    await store.appendRunEvents(steps.slice(0, 4));
    await store.appendRunEvents(steps.slice(4));
    await store.flush();
    await store.appendRunEvents([eventFixture('run_1', 'run-end', { status: 'completed' })]);
    await store.flush();
    const rows = new DatabaseSync(path, { readOnly: true });
    expect(
      rows
        .prepare("SELECT seq, type, last_seq FROM run_events WHERE run_id = 'run_1' ORDER BY seq")
        .all()
        .map((row) => ({ ...row })),
    ).toEqual([
      { seq: 1, type: 'run-queued', last_seq: null },
      { seq: 2, type: 'warning', last_seq: null },
      { seq: 3, type: 'events', last_seq: 8 },
      { seq: 9, type: 'run-end', last_seq: null },
    ]);
    expect(JSON.parse(rows.prepare("SELECT data FROM run_events WHERE run_id = 'run_1' AND seq = 3").get()?.data as string)[0]).toEqual([
      '2025-01-01T00:00:02.000Z',
      'step-start',
      { step: 1 },
    ]);
    rows.close();
    const reader = createSqliteStore({ path });
    const all = await reader.listRunEvents('run_1');
    expect(all.map((event) => [event.seq, event.type, event.data])).toEqual([
      [1, 'run-queued', {}],
      [2, 'warning', { kind: 'recovered' }],
      ...[1, 2, 3].flatMap((step, index) => [
        [3 + index * 2, 'step-start', { step }],
        [4 + index * 2, 'tool-call-start', { tool: 'noop', label: `noop ${step}` }],
      ]),
      [9, 'run-end', { status: 'completed' }],
    ]);
    expect(all.every((event) => (event.run_id === 'run_1' && event.at === '2025-01-01T00:00:02.000Z') || event.seq === 2)).toBe(true);
    expect((await reader.listRunEvents('run_0', { afterSeq: 1 })).map((event) => [event.seq, event.at, event.type])).toEqual([[2, 'b', 'run-start']]);
    for (let afterSeq = 0; afterSeq <= 9; afterSeq++) {
      expect(await reader.listRunEvents('run_1', { afterSeq })).toEqual(all.slice(afterSeq));
      for (const limit of [0, 1, 2, 5]) expect(await reader.listRunEvents('run_1', { afterSeq, limit })).toEqual(all.slice(afterSeq, afterSeq + limit));
    }
    // The next seq follows the last event of the last row.
    await store.appendRunEvents([eventFixture('run_1', 'result-consume')]);
    await store.flush();
    expect((await reader.listRunEvents('run_1', { afterSeq: 9 })).map((event) => [event.seq, event.type])).toEqual([[10, 'result-consume']]);
    await reader.close();
    await store.close();
  });

  it('writes a commit of more events than one INSERT takes in several, losing none', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    await store.appendRunEvents(Array.from({ length: 300 }, (_, index) => eventFixture('run_1', 'activity', { text: `line ${index}` })));
    await store.flush();
    const reader = createSqliteStore({ path });
    const events = await reader.listRunEvents('run_1');
    expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 301 }, (_, index) => index + 1));
    expect(events.at(-1)?.data).toEqual({ text: 'line 299' });
    // In rows small enough to stay in their b-tree page (no overflow page of their own).
    const rows = new DatabaseSync(path, { readOnly: true });
    const sizes = rows
      .prepare("SELECT length(data) AS size FROM run_events WHERE run_id = 'run_1'")
      .all()
      .map((row) => row.size as number);
    rows.close();
    expect(sizes.length).toBeGreaterThan(20);
    expect(Math.max(...sizes)).toBeLessThan(1000);
    await reader.close();
    await store.close();
  });

  it("moves only the rows of a run whose seq another process took, when a commit's INSERT collides", async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    for (const id of ['run_1', 'run_2', 'run_3']) await store.insertRun(runFixture({ id }), eventFixture(id, 'run-queued'));
    await store.flush();
    const other = new DatabaseSync(path);
    other.exec(`INSERT INTO run_events (run_id, seq, at, type, data) VALUES ('run_2', 2, 'x', 'warning', '{}')`);
    other.close();
    for (const id of ['run_1', 'run_2', 'run_3'])
      await store.appendRunEvents([eventFixture(id, 'step-start', { step: 1 }), eventFixture(id, 'step-start', { step: 2 })]);
    await store.flush();
    const reader = createSqliteStore({ path });
    const rows = async (id: string) => (await reader.listRunEvents(id)).map((event) => [event.seq, event.type, event.data]);
    for (const id of ['run_1', 'run_3']) {
      expect(await rows(id)).toEqual([
        [1, 'run-queued', {}],
        [2, 'step-start', { step: 1 }],
        [3, 'step-start', { step: 2 }],
      ]);
    }
    expect(await rows('run_2')).toEqual([
      [1, 'run-queued', {}],
      [2, 'warning', {}],
      [3, 'step-start', { step: 1 }],
      [4, 'step-start', { step: 2 }],
    ]);
    await reader.close();
    await store.close();
  });

  it('refuses a whole transition whose event cannot be stored, holding nothing of it', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    const start = (data: Record<string, unknown>) =>
      store.transitionRun({
        id: 'run_1',
        from: ['queued'],
        to: 'running',
        patch: { activity: { kind: 'text', text: 'starting' } },
        event: eventFixture('run_1', 'run-start', data),
      });
    await expect(start({ size: 10n })).rejects.toThrow(/BigInt/);
    expect(await store.getRun('run_1')).toMatchObject({ status: 'queued', last_activity: null });
    await store.flush();
    expect(await store.getRun('run_1')).toMatchObject({ status: 'queued', last_activity: null });
    expect((await start({}))?.status).toBe('running');
    await store.close();
    const reopened = createSqliteStore({ path });
    expect(await reopened.getRun('run_1')).toMatchObject({ status: 'running', last_activity: 'starting' });
    expect((await reopened.listRunEvents('run_1')).map((event) => [event.seq, event.type])).toEqual([
      [1, 'run-queued'],
      [2, 'run-start'],
    ]);
    await reopened.close();
  });

  it('records the schema version and refuses a file from a newer cadre', async () => {
    const path = newFile();
    await createSqliteStore({ path }).close();
    const database = new DatabaseSync(path);
    expect(database.prepare('PRAGMA user_version').get()).toEqual({ user_version: migrations.at(-1)!.version });
    database.exec('PRAGMA user_version = 999');
    database.close();
    expect(() => createSqliteStore({ path })).toThrow(ConfigError);
  });

  it('rejects use after close', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.close();
    await expect(store.getRun('run_1')).rejects.toThrow(/closed/);
    await expect(store.createSession(sessionFixture())).rejects.toThrow(/closed/);
  });
});

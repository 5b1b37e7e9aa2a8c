import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../errors/config-error.ts';
import type { Store } from '../store.ts';
import { runStoreCases } from '../store.case.ts';
import { eventFixture, runFixture, sessionFixture } from '../store-fixtures.ts';
import { migrations } from './migrations.ts';
import { createSqliteStore, seqCacheSize } from './sqlite-store.ts';

const folder = mkdtempSync(join(tmpdir(), 'cadre-sqlite-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

let fileCount = 0;
function newFile(): string {
  fileCount++;
  return join(folder, `nested-${fileCount}`, 'cadre.db');
}

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
    }
    expect({ code: await exited, errors: errors.replace(/.*ExperimentalWarning.*\n?/g, '') }).toEqual({ code: 0, errors: '' });
    expect(await store.listRuns({ stop_requested: true })).toHaveLength(25);
    expect((await store.getRun('run_0'))?.turns).toBe(turn);
    await store.close();
  });

  it('continues the seq of a run another process appended events to', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    const other = new DatabaseSync(path);
    other.exec(`INSERT INTO run_events (run_id, seq, at, type, data) VALUES ('run_1', 2, 'x', 'warning', '{}')`);
    other.close();
    const moved = await store.transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
    expect(moved?.status).toBe('running');
    expect((await store.listRunEvents('run_1')).map((event) => [event.seq, event.type])).toEqual([
      [1, 'run-queued'],
      [2, 'warning'],
      [3, 'run-start'],
    ]);
    await store.close();
  });

  it('undoes a whole transition when its event cannot be written', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    await store.insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
    const other = new DatabaseSync(path);
    other.exec(`CREATE TRIGGER refuse_start BEFORE INSERT ON run_events WHEN NEW.type = 'run-start' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    const start = () => store.transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
    await expect(start()).rejects.toThrow(/refused/);
    expect((await store.getRun('run_1'))?.status).toBe('queued');
    await store.flush();
    other.exec('DROP TRIGGER refuse_start');
    other.close();
    expect((await start())?.status).toBe('running');
    expect((await store.listRunEvents('run_1')).map((event) => [event.seq, event.type])).toEqual([
      [1, 'run-queued'],
      [2, 'run-start'],
    ]);
    await store.close();
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

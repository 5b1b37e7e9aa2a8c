import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { startBackgroundCheckpoints } from './background-checkpoint.ts';
import { openDatabase, walAutocheckpointPages } from './open-database.ts';
import { createSqliteStore } from './sqlite-store.ts';
import { eventually } from '../../../test/helpers/eventually.ts';

const folder = mkdtempSync(join(tmpdir(), 'cadre-background-checkpoint-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let count = 0;

/** A cadre database with a table of big rows, its writer connection open. */
function writer(): { path: string; database: DatabaseSync; write: (rows: number) => void } {
  const path = join(folder, `case-${++count}.db`);
  const database = openDatabase(path, 1000);
  database.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT)');
  const insert = database.prepare('INSERT INTO blobs (body) VALUES (?)');
  return {
    path,
    database,
    write(rows) {
      database.exec('BEGIN');
      for (let index = 0; index < rows; index++) insert.run('x'.repeat(3000));
      database.exec('COMMIT');
    },
  };
}

/** WAL frames committed, and of them those already copied into the database file, as another connection sees them. */
function walState(database: DatabaseSync): { frames: number; copied: number } {
  // A PASSIVE checkpoint of a connection that copies nothing itself (the pages are in the WAL of
  // this file): its answer tells how far the copies are.
  const row = database.prepare('PRAGMA wal_checkpoint(PASSIVE)').get() as { log: number; checkpointed: number };
  return { frames: row.log, copied: row.checkpointed };
}

function autocheckpoint(database: DatabaseSync): number {
  return (database.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
}

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  await eventually(condition, { timeout: ms });
}

describe('startBackgroundCheckpoints', () => {
  it('does nothing until the -wal file passes the threshold, then copies committed pages from a worker thread', async () => {
    const { path, database, write } = writer();
    const checkpoints = startBackgroundCheckpoints(path, { startAtBytes: 2 * 1024 * 1024, watchMs: 10, periodMs: 10 });
    write(10);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(checkpoints.running).toBe(false);

    write(1000);
    await until(() => checkpoints.running);
    // The writer checkpoints by itself only past walAutocheckpointPages (32 MB of 8 KB pages), far from here.
    expect(autocheckpoint(database)).toBe(walAutocheckpointPages);
    const sizeBefore = statSync(path).size;
    write(500);
    // The worker copies the new pages into the database file, which grows, with no checkpoint here.
    await until(() => statSync(path).size > sizeBefore + 500 * 3000);
    await checkpoints.stop();
    expect(checkpoints.running).toBe(false);
    database.close();
    // This connection, the last one, checkpointed what was left and removed the WAL.
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reader = new DatabaseSync(path);
    expect((reader.prepare('SELECT count(*) AS rows FROM blobs').get() as { rows: number }).rows).toBe(1510);
    reader.close();
  });

  it('lets the writer restart the WAL once the worker has caught up, so the file stops growing', async () => {
    const { path, database, write } = writer();
    const checkpoints = startBackgroundCheckpoints(path, { startAtBytes: 1, watchMs: 10, periodMs: 10 });
    write(400);
    await until(() => checkpoints.running);
    const observer = new DatabaseSync(path);
    for (let round = 0; round < 8; round++) {
      await until(() => {
        const { frames, copied } = walState(observer);
        return frames === copied;
      });
      write(400);
    }
    // Eight rounds of ~1.2 MB each went through a WAL that was restarted, not appended to.
    expect(statSync(`${path}-wal`).size).toBeLessThan(4 * 1024 * 1024);
    observer.close();
    await checkpoints.stop();
    database.close();
  });

  it('says so when the worker fails, and leaves checkpoints to the writer as before', async () => {
    const { database } = writer();
    const errors: unknown[] = [];
    // A folder where the database should be, with a -wal beside it: the worker starts, and its
    // connection cannot open the folder.
    const broken = join(folder, `not-a-database-${count}`);
    mkdirSync(broken);
    writeFileSync(`${broken}-wal`, 'x');
    const checkpoints = startBackgroundCheckpoints(broken, { startAtBytes: 1, watchMs: 10, onError: (error) => errors.push(error) });
    await until(() => errors.length > 0);
    expect(String(errors[0])).toMatch(/unable to open|SQLITE_CANTOPEN|directory/i);
    expect(checkpoints.running).toBe(false);
    expect(autocheckpoint(database)).toBe(walAutocheckpointPages);
    await checkpoints.stop();
    database.close();
  });

  it("lets a script's last await of stop() settle: the worker holds the process open while it ends", () => {
    // The writer stays open, so the -wal the child's watch looks at is there.
    const { path, database, write } = writer();
    write(10);
    const module = fileURLToPath(new URL('./background-checkpoint.ts', import.meta.url));
    const script = `
      const { startBackgroundCheckpoints } = await import(${JSON.stringify(module)});
      const checkpoints = startBackgroundCheckpoints(${JSON.stringify(path)}, { startAtBytes: 0, watchMs: 5 });
      while (!checkpoints.running) await new Promise((resolve) => setTimeout(resolve, 5));
      await checkpoints.stop();
      console.log('stopped');`;
    const child = spawnSync(process.execPath, ['--input-type=module', '--eval', script], { encoding: 'utf8', timeout: 20_000 });
    database.close();
    expect({ status: child.status, stdout: child.stdout.trim() }).toEqual({ status: 0, stdout: 'stopped' });
  });

  it('is used by the SQLite store, which stops it before closing its own connection', async () => {
    const path = join(folder, `store-${++count}.db`);
    const store = createSqliteStore({ path });
    const session = {
      id: 'ses_1',
      agent: 'main',
      model: 'm',
      created_at: '2026-01-01T00:00:00.000Z',
      status: 'idle' as const,
      parent_run_id: null,
      auto_resumes: 0,
      user_canceled_at: null,
    };
    await store.createSession(session);
    const body = 'y'.repeat(4000);
    for (let batch = 0; batch < 15; batch++) {
      await store.appendMessages(
        Array.from({ length: 100 }, () => ({ session_id: session.id, role: 'user' as const, content: body, created_at: '2026-01-01T00:00:00.000Z' })),
      );
      await store.flush();
    }
    // About 6 MB in the WAL, under what this connection checkpoints by itself (32 MB): only the
    // worker, started once the -wal passed 4 MiB, copies pages into the database file.
    await until(() => statSync(path).size > 4 * 1024 * 1024);
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = createSqliteStore({ path });
    expect(await reopened.listMessages(session.id)).toHaveLength(1500);
    await reopened.close();
  });

  it('lets close() settle in a process with nothing else to do once the worker runs', () => {
    const path = join(folder, `alone-${++count}.db`);
    // The store is the process's only work: the worker is stopped while the event loop holds nothing else.
    const script = `import { createSqliteStore } from ${JSON.stringify(new URL('./sqlite-store.ts', import.meta.url).href)};
      const store = createSqliteStore({ path: ${JSON.stringify(path)} });
      await store.createSession({ id: 'ses_1', agent: 'main', model: 'm', created_at: 'now', status: 'idle', parent_run_id: null, auto_resumes: 0, user_canceled_at: null });
      for (let batch = 0; batch < 12; batch++) {
        await store.appendMessages([{ session_id: 'ses_1', role: 'user', content: 'z'.repeat(500_000), created_at: 'now' }]);
        await store.flush();
      }
      // The -wal is past 4 MiB: the worker starts at the next look (every 500 ms).
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await store.close();
      console.log('closed');`;
    // A file, not -e: code given with -e keeps the event loop alive on its own.
    const file = join(folder, `alone-${count}.mjs`);
    writeFileSync(file, script);
    const result = spawnSync(process.execPath, [file], { encoding: 'utf8' });
    expect(result.stderr).not.toContain('unsettled');
    expect(result.stdout.trim()).toBe('closed');
    expect(result.status).toBe(0);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });
});

import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../errors/config-error.ts';
import { exportSession } from '../../export/export-session.ts';
import { latestVersion } from './migrations.ts';
import { createSqliteStore } from './sqlite-store.ts';

/**
 * `test/fixtures/store-v4/cadre.db` was written by cadre at main 1d55694 (schema version 4, the
 * last before issue 21's batched writes) with `writeExportScenario`, and `exports.json` is what
 * that build exported from it (`exportSession`, `now` fixed). Neither is regenerated: they stand
 * for a user's existing database.
 */
const fixtures = fileURLToPath(new URL('../../../test/fixtures/store-v4/', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'cadre-older-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

let copies = 0;
/** A fresh copy of the schema-4 fixture in a folder of its own. */
function olderDatabase(): string {
  copies++;
  const path = join(folder, `copy-${copies}`, 'cadre.db');
  mkdirSync(join(folder, `copy-${copies}`));
  copyFileSync(join(fixtures, 'cadre.db'), path);
  return path;
}

function versionOf(path: string): number {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    return (database.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
  } finally {
    database.close();
  }
}

function sessionIds(path: string): string[] {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    return (database.prepare('SELECT id FROM sessions ORDER BY id').all() as Array<{ id: string }>).map((row) => row.id);
  } finally {
    database.close();
  }
}

/**
 * Another process holding the database open the way an older cadre does (a plain SQLite
 * connection in WAL mode, after a read), for `holdMs`. Resolves once it has the file open.
 */
async function holdOpen(path: string, holdMs: number): Promise<{ exited: Promise<number | null> }> {
  const script = `
    import { DatabaseSync } from 'node:sqlite';
    const database = new DatabaseSync(${JSON.stringify(path)});
    database.exec('PRAGMA journal_mode = WAL');
    database.prepare('SELECT COUNT(*) FROM sessions').get();
    process.stdout.write('open\\n');
    setTimeout(() => database.close(), ${holdMs});
  `;
  const child = spawn(process.execPath, ['--input-type=module', '--eval', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    void exited.then((code) => reject(new Error(`the holder exited (${code}) before it had the file open`)));
  });
  return { exited };
}

describe('a database written by an older cadre', () => {
  it('exports every session exactly as the cadre that wrote it did, once upgraded', async () => {
    const path = olderDatabase();
    const expected = JSON.parse(readFileSync(join(fixtures, 'exports.json'), 'utf8')) as Record<string, unknown>;
    const store = createSqliteStore({ path });
    const now = () => '2025-01-02T00:00:00.000Z';
    for (const [id, document] of Object.entries(expected)) expect(await exportSession(store, id, { now })).toEqual(document);
    await store.close();
    expect(versionOf(path)).toBe(latestVersion);
  });

  it('is upgraded in place after SQLite copied it aside to cadre.db.bak-v4, which older builds still read', async () => {
    const path = olderDatabase();
    const warnings: string[] = [];
    const store = createSqliteStore({ path, onWarning: (message) => warnings.push(message) });
    await store.close();
    const backup = `${path}.bak-v4`;
    expect(warnings).toEqual([
      `The database ${path} was upgraded from schema version 4 to ${latestVersion}; older cadre builds cannot open it now. A copy of it as it was is at ${backup}.`,
    ]);
    expect(versionOf(path)).toBe(latestVersion);
    expect(versionOf(backup)).toBe(4);
    expect(sessionIds(backup)).toEqual(sessionIds(path));
    // The new schema: the lease index keeps only runs that hold a lease.
    const database = new DatabaseSync(path, { readOnly: true });
    expect((database.prepare("SELECT sql FROM sqlite_schema WHERE name = 'runs_lease_owner'").get() as { sql: string }).sql).toContain(
      'WHERE lease_owner IS NOT NULL',
    );
    database.close();
    // Opened again, it is current: no second copy.
    createSqliteStore({ path }).close();
    expect(existsSync(`${backup}-2`)).toBe(false);
  });

  it('copies rows still only in the WAL of a process that died (a copy of the file alone would lose them)', async () => {
    const path = olderDatabase();
    // An older cadre that wrote a session and was killed before any checkpoint.
    const script = `
      import { DatabaseSync } from 'node:sqlite';
      const database = new DatabaseSync(${JSON.stringify(path)});
      database.exec('PRAGMA journal_mode = WAL');
      database.exec('PRAGMA wal_autocheckpoint = 0');
      database.exec("INSERT INTO sessions (id, agent, model, created_at, status) VALUES ('ses_in_wal', 'main', 'scripted:test', '2025-01-03T00:00:00.000Z', 'idle')");
      process.kill(process.pid, 'SIGKILL');
    `;
    spawnSync(process.execPath, ['--input-type=module', '--eval', script], { stdio: 'inherit' });
    expect(existsSync(`${path}-wal`)).toBe(true);
    const fileAlone = join(folder, `file-alone-${copies}.db`);
    copyFileSync(path, fileAlone);
    expect(sessionIds(fileAlone)).not.toContain('ses_in_wal');

    await createSqliteStore({ path }).close();
    expect(sessionIds(`${path}.bak-v4`)).toContain('ses_in_wal');
    expect(versionOf(`${path}.bak-v4`)).toBe(4);
    expect(sessionIds(path)).toContain('ses_in_wal');
  });

  it('refuses, with what to do, a database an older process still has open, and leaves it as it was', async () => {
    const path = olderDatabase();
    const holder = await holdOpen(path, 1500);
    let error: unknown;
    try {
      createSqliteStore({ path, busyTimeoutMs: 300 });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      `The database ${path} has schema version 4 and this cadre upgrades it to version ${latestVersion}, but another process still has it open: an older cadre (run, serve, mcp or a worker) that cannot use it once upgraded. Stop that process (or let it finish), then run the command again; nothing was changed. Waited 0.3 s.`,
    );
    await holder.exited;
    expect(versionOf(path)).toBe(4);
    expect(existsSync(`${path}.bak-v4`)).toBe(false);
  });

  it('waits for an older process that lets go of the database within the busy timeout, then upgrades it', async () => {
    const path = olderDatabase();
    const holder = await holdOpen(path, 300);
    const store = createSqliteStore({ path, busyTimeoutMs: 10_000 });
    expect(await store.getSession('ses_1')).not.toBeNull();
    await store.close();
    expect(await holder.exited).toBe(0);
    expect(versionOf(path)).toBe(latestVersion);
    expect(versionOf(`${path}.bak-v4`)).toBe(4);
  });

  it('is upgraded once when three new processes open it at the same moment', async () => {
    const path = olderDatabase();
    const storeModule = fileURLToPath(new URL('./sqlite-store.ts', import.meta.url));
    const script = `
      import { createSqliteStore } from ${JSON.stringify(storeModule)};
      const store = createSqliteStore({ path: ${JSON.stringify(path)}, busyTimeoutMs: 10000 });
      const session = await store.getSession('ses_1');
      await store.close();
      process.stdout.write(session ? 'ok' : 'missing');
    `;
    const run = () =>
      new Promise<string>((resolve) => {
        const child = spawn(process.execPath, ['--input-type=module', '--eval', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (chunk) => (out += String(chunk)));
        child.on('exit', (code) => resolve(`${code} ${out}`));
      });
    expect(await Promise.all([run(), run(), run()])).toEqual(['0 ok', '0 ok', '0 ok']);
    expect(versionOf(path)).toBe(latestVersion);
    expect(existsSync(`${path}.bak-v4`)).toBe(true);
    expect(existsSync(`${path}.bak-v4-2`)).toBe(false);
  });
});

import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../errors/config-error.ts';
import { databaseFiles, newPageSize, openDatabase } from './open-database.ts';
import { migrate, migrations } from './migrations.ts';

const folder = mkdtempSync(join(tmpdir(), 'cadre-open-database-'));
// Read-only cases run as an unprivileged user when the tests run as root (root writes anything).
chmodSync(folder, 0o755);
afterAll(() => {
  spawnSync('chmod', ['-R', 'u+w', folder]);
  rmSync(folder, { recursive: true, force: true });
});

let count = 0;
function newFolder(): string {
  const path = join(folder, `case-${++count}`);
  mkdirSync(path, { mode: 0o755 });
  chmodSync(path, 0o755);
  return path;
}

/** A cadre database with one session, committed and checkpointed. */
function cadreDatabase(path: string): void {
  const database = openDatabase(path, 1000);
  database.prepare("INSERT INTO sessions (id, agent, model, created_at, status) VALUES ('ses_1', 'main', 'm', 'now', 'idle')").run();
  database.close();
}

function openError(path: string, options?: Parameters<typeof openDatabase>[2]): Error {
  try {
    openDatabase(path, 1000, options).close();
  } catch (error) {
    return error as Error;
  }
  throw new Error(`${path} opened`);
}

const moduleUrl = new URL('./open-database.ts', import.meta.url).href;

/** Runs `body` (ES module code with `openDatabase` in scope) in a process that cannot write what root could. */
function asUnprivileged(body: string): { stdout: string; stderr: string; status: number | null } {
  const script = `import { openDatabase } from ${JSON.stringify(moduleUrl)};\n${body}`;
  const asRoot = process.getuid?.() === 0;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    cwd: folder,
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

describe('openDatabase refuses what it cannot use, naming the file and what to do', () => {
  it('refuses a file that is not SQLite and leaves it as it was', () => {
    const path = join(newFolder(), 'cadre.db');
    writeFileSync(path, 'just some notes, long enough to fill a header of one hundred bytes...................................');
    const error = openError(path);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(error.message).toBe(
      `The file ${path} is not a SQLite database (or its header is damaged), not a cadre database. Point --db (or CADRE_DB, or db in cadre.config.json) at cadre's database, or move the file aside so cadre creates a new one there; if it was cadre's database, restore it from a backup.`,
    );
    expect(readFileSync(path, 'utf8')).toMatch(/^just some notes/);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it("refuses another program's SQLite database", () => {
    const path = join(newFolder(), 'other.db');
    const other = new DatabaseSync(path);
    other.exec('CREATE TABLE photos (id INTEGER PRIMARY KEY)');
    other.close();
    expect(openError(path).message).toContain(`The file ${path} is a SQLite database of another program, not a cadre database.`);
  });

  it('refuses a directory given as the database', () => {
    const path = newFolder();
    expect(openError(path).message).toContain(`The file ${path} is a directory, not a cadre database.`);
  });

  it('notices a damaged database at open: a page overwritten, or the file cut inside its header', () => {
    const path = join(newFolder(), 'cadre.db');
    cadreDatabase(path);
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    // Garbage over the second page (the sessions table's root).
    bytes.fill(0x5a, pageSize, pageSize * 2);
    writeFileSync(path, bytes);
    const error = openError(path);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(
      new RegExp(
        `^The database ${path} is damaged \\(.+\\)\\. Restore it from a backup, or move it aside \\(with its -wal and -shm files\\) so cadre starts a new one\\.$`,
      ),
    );

    writeFileSync(path, bytes.subarray(0, 40));
    expect(openError(path).message).toMatch(new RegExp(`^The database ${path} is damaged \\(.+\\)\\. Restore it from a backup`));
  });

  it('refuses a database of a newer cadre before writing anything to it, journal mode included', () => {
    const path = join(newFolder(), 'cadre.db');
    const newer = new DatabaseSync(path);
    newer.exec('PRAGMA journal_mode = DELETE; CREATE TABLE sessions (id TEXT); PRAGMA user_version = 999');
    newer.close();
    const before = readFileSync(path);
    const error = openError(path);
    expect(ConfigError.isInstance(error)).toBe(true);
    const latest = migrations.at(-1)!.version;
    expect(error.message).toBe(
      `The database ${path} has schema version 999, newer than this build of cadre knows (${latest}); it was left untouched. Upgrade cadre, or use another --db.`,
    );
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('lists the files of a database: itself, -wal, -shm and -journal; none in memory', () => {
    expect(databaseFiles('/x/cadre.db')).toEqual(['/x/cadre.db', '/x/cadre.db-wal', '/x/cadre.db-shm', '/x/cadre.db-journal']);
    expect(databaseFiles(':memory:')).toEqual([]);
  });
});

describe('openDatabase page size', () => {
  it('creates a new database with 8 KB pages and leaves an existing one the size it has', () => {
    const created = join(newFolder(), 'cadre.db');
    const database = openDatabase(created, 1000);
    expect(database.prepare('PRAGMA page_size').get()).toEqual({ page_size: newPageSize });
    database.close();
    const again = openDatabase(created, 1000);
    expect(again.prepare('PRAGMA page_size').get()).toEqual({ page_size: newPageSize });
    again.close();
    // A database an earlier build made, with SQLite's default pages.
    const older = join(newFolder(), 'cadre.db');
    const plain = new DatabaseSync(older);
    plain.exec('PRAGMA page_size = 4096');
    migrate(plain, older);
    plain.close();
    const opened = openDatabase(older, 1000);
    expect(opened.prepare('PRAGMA page_size').get()).toEqual({ page_size: 4096 });
    opened.prepare("INSERT INTO sessions (id, agent, model, created_at, status) VALUES ('ses_1', 'main', 'm', 'now', 'idle')").run();
    opened.close();
  });
});

describe('openDatabase on a database it cannot write', () => {
  it('refuses a writer, and opens it read-only for a reader, when the file is read-only', () => {
    const path = join(newFolder(), 'cadre.db');
    cadreDatabase(path);
    chmodSync(path, 0o444);
    const result = asUnprivileged(`
      try { openDatabase(${JSON.stringify(path)}, 1000); console.log('opened for writing'); } catch (error) { console.log(error.message); }
      const reader = openDatabase(${JSON.stringify(path)}, 1000, { readOnly: true, onWarning: (message) => console.log('warning', message) });
      console.log(JSON.stringify(reader.prepare('SELECT id FROM sessions').all()));
      try { reader.exec("UPDATE sessions SET status = 'x'"); } catch (error) { console.log(error.message); }
    `);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')).toEqual([
      `The database ${path} is read-only (its file, its folder or the disk cannot be written), and this command writes to it. Make it writable, or use another --db; commands that only read (runs, show, export, sessions, approvals) still work.`,
      '[{"id":"ses_1"}]',
      'attempt to write a readonly database',
      '',
    ]);
  });

  it('reads a database in a read-only folder whose WAL holds rows: immutable, with a warning that they are missing', () => {
    const directory = newFolder();
    const path = join(directory, 'cadre.db');
    cadreDatabase(path);
    // A process that dies with a commit in its WAL, which no checkpoint copied to the file.
    const crashed = spawnSync(process.execPath, [
      '--input-type=module',
      '-e',
      `import { DatabaseSync } from 'node:sqlite';
       const database = new DatabaseSync(${JSON.stringify(path)});
       database.exec('PRAGMA wal_autocheckpoint = 0');
       database.prepare("INSERT INTO sessions (id, agent, model, created_at, status) VALUES ('ses_2', 'main', 'm', 'now', 'idle')").run();
       process.kill(process.pid, 'SIGKILL');`,
    ]);
    expect(crashed.signal).toBe('SIGKILL');
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
    rmSync(`${path}-shm`, { force: true });
    chmodSync(path, 0o444);
    chmodSync(`${path}-wal`, 0o444);
    chmodSync(directory, 0o555);
    const result = asUnprivileged(`
      const reader = openDatabase(${JSON.stringify(path)}, 1000, { readOnly: true, onWarning: (message) => console.log(message) });
      console.log(JSON.stringify(reader.prepare('SELECT id FROM sessions').all()));
    `);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')).toEqual([
      `The database ${path} and its folder are read-only and its -shm file cannot be used, so it was opened as an unchanging file: rows not yet checkpointed from ${path}-wal are missing from what is shown.`,
      '[{"id":"ses_1"}]',
      '',
    ]);
    chmodSync(directory, 0o755);
  });
});

describe.runIf(process.platform === 'linux')('openDatabase never opens the file behind SQLite', () => {
  /** The POSIX locks this process holds on a file (SQLite keeps a shared one on an open database). */
  function locksOn(path: string): number {
    const inode = String(statSync(path).ino);
    return readFileSync('/proc/locks', 'utf8')
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[4] === String(process.pid) && fields[5]?.split(':')[2] === inode).length;
  }

  it('keeps the locks of a connection this process holds when it opens the same database again', () => {
    const path = join(newFolder(), 'cadre.db');
    cadreDatabase(path);
    const first = openDatabase(path, 1000);
    first.prepare('SELECT COUNT(*) FROM sessions').get();
    expect(locksOn(path)).toBeGreaterThan(0);
    // A header read by hand (open, read, close) would drop every lock SQLite holds on the file here.
    openDatabase(path, 1000).close();
    expect(locksOn(path)).toBeGreaterThan(0);
    first.close();
  });

  it('keeps them through a migration too (a backup must be made by SQLite, never by copying the file)', () => {
    const path = join(newFolder(), 'cadre.db');
    const older = new DatabaseSync(path);
    older.exec('PRAGMA journal_mode = WAL');
    for (const migration of migrations.slice(0, -1)) older.exec(migration.sql);
    older.exec(`PRAGMA user_version = ${migrations.at(-2)!.version}`);
    older.prepare('SELECT 1').get();
    expect(locksOn(path)).toBeGreaterThan(0);
    const upgraded = openDatabase(path, 1000);
    expect(upgraded.prepare('PRAGMA user_version').get()).toEqual({ user_version: migrations.at(-1)!.version });
    expect(locksOn(path)).toBeGreaterThan(0);
    upgraded.close();
    older.close();
  });
});

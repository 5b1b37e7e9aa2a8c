import { accessSync, constants, existsSync, mkdirSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../../errors/config-error.ts';
import { systemNowMs, systemRandom, type NowMs, type Random } from '../../util/clock.ts';
import { DatabaseReplacedError } from '../store-failure-error.ts';
import { loadSqlite } from './load-sqlite.ts';
import { latestVersion, migrate, migrations, UpgradeBusyError } from './migrations.ts';

/** Options of {@link openDatabase} besides the busy timeout. */
export interface OpenDatabaseOptions {
  /**
   * The caller only reads (`cadre runs`, `show`, `export`): a database this process cannot write
   * (file mode, read-only folder or mount) is opened read-only instead of refused, or immutable
   * when even its `-shm` cannot be used, with a warning. Writing callers are refused with an error
   * that says the database is read-only.
   * @default false
   */
  readOnly?: boolean | undefined;
  /** Told once about a database opened with a limitation (immutable: uncheckpointed rows missing). */
  onWarning?: ((message: string) => void) | undefined;
  /** The clock in epoch milliseconds the wait for another process's upgrade is timed on. @default systemNowMs */
  nowMs?: NowMs | undefined;
  /** Random numbers for the pauses of that wait. @default systemRandom */
  random?: Random | undefined;
}

/** SQLite result codes that mean the file is damaged or not a database at all. */
const corruptCode = 11;
const notADatabaseCode = 26;
/** SQLITE_BUSY: another connection kept a lock past the busy timeout. */
const busyCode = 5;

/** Files up to this size are checked page by page at open (`PRAGMA quick_check`, ~1 ms per MB). */
const checkedBytes = 64 * 1024 * 1024;

/** The files SQLite keeps for the database `path`: the database and its `-wal`, `-shm` and `-journal`. */
export function databaseFiles(path: string): string[] {
  if (path === ':memory:' || path === '') return [];
  const absolute = resolve(path);
  return [absolute, `${absolute}-wal`, `${absolute}-shm`, `${absolute}-journal`];
}

function canWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether SQLite can write the database at `path`: the file itself, and its folder (for the
 * `-wal`, `-shm` and `-journal` files) unless the WAL files are there and writable already.
 */
function isWritable(path: string): boolean {
  if (!canWrite(path)) return false;
  return canWrite(dirname(path)) || (canWrite(`${path}-wal`) && canWrite(`${path}-shm`));
}

function damagedError(path: string, cause: unknown): ConfigError {
  // quick_check reports over several lines; one line reads better after "cadre:".
  const reason = (cause instanceof Error ? cause.message : String(cause))
    .replace(/\*\*\* in database \w+ \*\*\*/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return new ConfigError(
    `The database ${path} is damaged (${reason}). Restore it from a backup, or move it aside (with its -wal and -shm files) so cadre starts a new one.`,
    { cause },
  );
}

function foreignError(path: string, what: string): ConfigError {
  return new ConfigError(
    `The file ${path} is ${what}, not a cadre database. Point --db (or CADRE_DB, or db in cadre.config.json) at cadre's database, or move the file aside so cadre creates a new one there; if it was cadre's database, restore it from a backup.`,
  );
}

function readOnlyError(path: string): ConfigError {
  return new ConfigError(
    `The database ${path} is read-only (its file, its folder or the disk cannot be written), and this command writes to it. Make it writable, or use another --db; commands that only read (runs, show, export, sessions, approvals) still work.`,
  );
}

/**
 * Refuses what is not a file, by `stat` alone. The file itself is never opened here: in a process
 * that already holds it through SQLite, closing any descriptor of it would drop SQLite's locks.
 */
function checkKind(path: string, info: Stats): void {
  if (info.isDirectory()) throw foreignError(path, 'a directory');
  if (!info.isFile()) throw foreignError(path, 'not a regular file');
}

/** The error for a file SQLite could not read as a database. */
function unreadableError(path: string, error: unknown): ConfigError {
  const code = (error as { errcode?: number } | null)?.errcode;
  // SQLite cannot tell another file from a database whose header was overwritten; neither can we.
  if (code !== undefined && (code & 0xff) === notADatabaseCode) return foreignError(path, 'not a SQLite database (or its header is damaged)');
  return damagedError(path, error);
}

function isDamage(error: unknown): boolean {
  const code = (error as { errcode?: number } | null)?.errcode;
  // Extended codes keep the primary code in the low byte.
  return code !== undefined && ((code & 0xff) === corruptCode || (code & 0xff) === notADatabaseCode);
}

/**
 * Reads what the file is, writing nothing: its schema version and its tables. Refuses a database
 * of a newer cadre, a SQLite database of another program, and a damaged one.
 * @returns the schema version.
 */
function inspect(database: DatabaseSync, path: string, size: number): number {
  const latest = migrations[migrations.length - 1].version;
  let version: number;
  let tables: Set<string>;
  try {
    version = (database.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    const rows = database.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as Array<{ name: string }>;
    tables = new Set(rows.map((row) => row.name));
    if (size <= checkedBytes) {
      const [first] = database.prepare('PRAGMA quick_check(1)').all() as Array<{ quick_check: string }>;
      if (first?.quick_check !== 'ok') throw new Error(first?.quick_check ?? 'quick_check found a problem');
    }
  } catch (error) {
    if (((error as { errcode?: number } | null)?.errcode ?? 0) % 256 === busyCode) {
      throw new ConfigError(
        `The database ${path} stayed locked by another process (an upgrade of its schema, or a long write, may be under way); run the command again in a moment.`,
        { cause: error },
      );
    }
    throw unreadableError(path, error);
  }
  if (version > latest) {
    throw new ConfigError(
      `The database ${path} has schema version ${version}, newer than this build of cadre knows (${latest}); it was left untouched. Upgrade cadre, or use another --db.`,
    );
  }
  if (tables.size > 0 && !tables.has('sessions')) throw foreignError(path, 'a SQLite database of another program');
  return version;
}

/**
 * Opens (or creates) a cadre database with the newest schema. A file's folder is created;
 * `:memory:` gives a private database that lives as long as the connection.
 *
 * Before anything is written the file is checked: one that is not a SQLite database, another
 * program's database, a damaged one or one of a newer cadre is refused with a {@link ConfigError}
 * that names the file and says what to do. A database this process cannot write is refused too,
 * unless `readOnly` is set: then it is opened read-only (see {@link OpenDatabaseOptions}).
 */
export function openDatabase(
  path: string,
  busyTimeoutMs: number,
  { readOnly = false, onWarning, nowMs = systemNowMs, random = systemRandom }: OpenDatabaseOptions = {},
): DatabaseSync {
  const { DatabaseSync: Database } = loadSqlite();
  if (path === ':memory:') return prepare(new Database(path, { timeout: busyTimeoutMs }), path, 0);
  const absolute = resolve(path);
  const info = statSync(absolute, { throwIfNoEntry: false });
  if (info === undefined) {
    mkdirSync(dirname(absolute), { recursive: true });
    if (!canWrite(dirname(absolute))) throw readOnlyError(path);
    return prepare(new Database(path, { timeout: busyTimeoutMs }), path, 0);
  }
  checkKind(path, info);
  if (isWritable(absolute)) return openUpgrading(path, busyTimeoutMs, info.size, onWarning, nowMs, random);
  if (!readOnly) throw readOnlyError(path);
  return openReadOnly(path, absolute, busyTimeoutMs, info.size, onWarning);
}

/**
 * A check, for each commit, that the file at `path` is still the database this process opened
 * (same device and inode): once it was deleted (`.cadre` removed) or replaced (another file moved
 * there), commits would go to a file nobody will read again, so the check throws.
 * @throws {DatabaseReplacedError} from the returned check.
 */
export function watchDatabaseFile(path: string): () => void {
  if (path === ':memory:' || path === '') return () => {};
  const absolute = resolve(path);
  const opened = statSync(absolute, { throwIfNoEntry: false });
  if (opened === undefined) return () => {};
  return function checkDatabaseFile() {
    const now = statSync(absolute, { throwIfNoEntry: false });
    if (now === undefined || now.ino !== opened.ino || now.dev !== opened.dev) throw new DatabaseReplacedError(path, now === undefined);
  };
}

/** A read-only connection: plain read-only where the `-shm` can be used, else immutable with a warning. */
function openReadOnly(path: string, absolute: string, busyTimeoutMs: number, size: number, onWarning: OpenDatabaseOptions['onWarning']): DatabaseSync {
  const { DatabaseSync: Database } = loadSqlite();
  let database: DatabaseSync | undefined;
  try {
    database = new Database(path, { readOnly: true, timeout: busyTimeoutMs });
    // Opening is lazy: the first read is what needs the -shm.
    database.prepare('SELECT 1 FROM sqlite_schema LIMIT 1').all();
  } catch (error) {
    database?.close();
    database = undefined;
    if (isDamage(error)) throw unreadableError(path, error);
    // Only a -shm that cannot be opened or made (CANTOPEN, READONLY, IOERR_SHM*) calls for immutable.
    const code = ((error as { errcode?: number } | null)?.errcode ?? 0) & 0xff;
    if (code !== 14 && code !== 8 && code !== 10) throw error;
  }
  if (database === undefined) {
    const url = pathToFileURL(absolute);
    url.searchParams.set('immutable', '1');
    database = new Database(url, { readOnly: true });
    if (existsSync(`${absolute}-wal`) && statSync(`${absolute}-wal`).size > 0) {
      onWarning?.(
        `The database ${path} and its folder are read-only and its -shm file cannot be used, so it was opened as an unchanging file: rows not yet checkpointed from ${path}-wal are missing from what is shown.`,
      );
    }
  }
  try {
    const version = inspect(database, path, size);
    const latest = migrations[migrations.length - 1].version;
    if (version < latest) {
      throw new ConfigError(
        `The database ${path} has schema version ${version}, older than this cadre's (${latest}), and is read-only, so it cannot be upgraded. Make it writable and run any cadre command once.`,
      );
    }
    return database;
  } catch (error) {
    database.close();
    throw error;
  }
}

/**
 * Opens an existing file, upgrading an older schema in place (see `migrate`). While another
 * connection has a file that needs an upgrade open, it is opened again until `busyTimeoutMs` has
 * passed (a second new cadre upgrading it at the same moment lets go at once, and this one then
 * finds it upgraded); then it is refused with a {@link ConfigError} that says which process to stop.
 */
function openUpgrading(
  path: string,
  busyTimeoutMs: number,
  size: number,
  onWarning: OpenDatabaseOptions['onWarning'],
  nowMs: NowMs,
  random: Random,
): DatabaseSync {
  const { DatabaseSync: Database } = loadSqlite();
  const deadline = nowMs() + busyTimeoutMs;
  for (;;) {
    try {
      return prepare(new Database(path, { timeout: busyTimeoutMs }), path, size, onWarning, busyTimeoutMs);
    } catch (error) {
      if (!(error instanceof UpgradeBusyError)) throw error;
      if (nowMs() >= deadline) {
        throw new ConfigError(
          `The database ${path} has schema version ${error.version} and this cadre upgrades it to version ${latestVersion}, but another process still has it open: an older cadre (run, serve, mcp or a worker) that cannot use it once upgraded. Stop that process (or let it finish), then run the command again; nothing was changed. Waited ${Number((busyTimeoutMs / 1000).toFixed(1))} s.`,
          { cause: error },
        );
      }
      // Another new cadre may be upgrading it now, and lets go once done; or two are trying at
      // once, each in the other's way: a random pause gets one of them through.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.floor(random() * 80));
    }
  }
}

/** The page size of a database this build creates. */
export const newPageSize = 8192;

/** How many WAL pages a connection lets pile up before it checkpoints them itself (16 MB of 4 KB pages, 32 MB of 8 KB ones). */
export const walAutocheckpointPages = 4000;

/** Checks the file, then sets WAL mode and brings the schema up to date. */
function prepare(database: DatabaseSync, path: string, size: number, onWarning?: OpenDatabaseOptions['onWarning'], busyTimeoutMs = 5000): DatabaseSync {
  try {
    // Read before anything is written: a file of a newer cadre is left exactly as it was.
    inspect(database, path, size);
    // A new file gets 8 KB pages (SQLite's default is 4 KB): a step's rows (messages of a few KB,
    // a run's row with its result) fill pages better, and a commit writes half as many WAL frames
    // for about the same bytes. Set before WAL mode, which fixes the size; older files keep theirs.
    if (size === 0) database.exec(`PRAGMA page_size = ${newPageSize}`);
    database.exec('PRAGMA journal_mode = WAL');
    // In WAL mode this survives a crash of the process; only a power loss can drop the last commits.
    database.exec('PRAGMA synchronous = NORMAL');
    // Many runs append to their own pages, so a commit writes many pages; checkpointing every
    // 16 MB instead of 4 MB copies each hot page to the database file less often.
    database.exec(`PRAGMA wal_autocheckpoint = ${walAutocheckpointPages}`);
    database.exec('PRAGMA journal_size_limit = 67108864');
    const upgraded = migrate(database, path, path === ':memory:' ? null : path, busyTimeoutMs);
    if (upgraded) {
      onWarning?.(
        `The database ${path} was upgraded from schema version ${upgraded.from} to ${upgraded.to}; older cadre builds cannot open it now. A copy of it as it was is at ${upgraded.backup}.`,
      );
    }
    return database;
  } catch (error) {
    database.close();
    if (isDamage(error)) throw unreadableError(path, error);
    throw error;
  }
}

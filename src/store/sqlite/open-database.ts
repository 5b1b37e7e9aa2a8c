import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { loadSqlite } from './load-sqlite.ts';
import { migrate } from './migrations.ts';

/**
 * Opens (or creates) a cadre database with the newest schema. A file's folder is created;
 * `:memory:` gives a private database that lives as long as the connection.
 */
export function openDatabase(path: string, busyTimeoutMs: number): DatabaseSync {
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  // The busy timeout lets a second process (a `cadre stop`) wait for the write lock.
  const database = new (loadSqlite().DatabaseSync)(path, { timeout: busyTimeoutMs });
  try {
    database.exec('PRAGMA journal_mode = WAL');
    // In WAL mode this survives a crash of the process; only a power loss can drop the last commits.
    database.exec('PRAGMA synchronous = NORMAL');
    // Many runs append to their own pages, so a commit writes many pages; checkpointing every
    // 16 MB instead of 4 MB copies each hot page to the database file less often.
    database.exec('PRAGMA wal_autocheckpoint = 4000');
    database.exec('PRAGMA journal_size_limit = 67108864');
    migrate(database, path);
    return database;
  } catch (error) {
    database.close();
    throw error;
  }
}

import { existsSync, readFileSync, statSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';
import { ConfigError } from '../../errors/config-error.ts';

/** One numbered step of the schema. Steps only ever get added, never edited once released. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The schema, step by step. `PRAGMA user_version` holds the last applied version, so a later
 * build adds a step (for example `ALTER TABLE runs ADD COLUMN ...`) and older files catch up.
 */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, messages, runs and run events',
    sql: `
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        model TEXT NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL,
        parent_run_id TEXT,
        auto_resumes INTEGER NOT NULL DEFAULT 0,
        user_canceled_at TEXT
      );
      CREATE INDEX sessions_created_at ON sessions (created_at, id);

      CREATE TABLE messages (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      );

      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        parent_session_id TEXT NOT NULL,
        child_session_id TEXT NOT NULL,
        parent_run_id TEXT,
        tool_call_id TEXT,
        agent TEXT NOT NULL,
        description TEXT NOT NULL,
        task TEXT NOT NULL,
        context TEXT,
        mode TEXT NOT NULL,
        status TEXT NOT NULL,
        depth INTEGER NOT NULL,
        max_turns INTEGER NOT NULL,
        turns INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        started_at TEXT,
        ended_at TEXT,
        promoted_at TEXT,
        consumed_at TEXT,
        last_activity TEXT,
        result TEXT,
        partial_result TEXT,
        error TEXT,
        usage TEXT NOT NULL,
        warnings TEXT NOT NULL,
        notification TEXT,
        resumed_from TEXT,
        lease_owner TEXT,
        lease_expires_at TEXT,
        stop_requested_at TEXT,
        stop_requested_by TEXT,
        stop_reason TEXT
      );
      CREATE INDEX runs_parent_session ON runs (parent_session_id, created_at);
      CREATE INDEX runs_parent_run ON runs (parent_run_id);
      CREATE INDEX runs_status ON runs (status);
      CREATE INDEX runs_lease_owner ON runs (lease_owner);

      CREATE TABLE run_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        at TEXT NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    name: 'an index of runs whose notification is pending',
    // Recovery looks for notifications never delivered; few runs have one, so a partial index
    // keeps that look cheap however many runs the file holds. Terms as in runQuerySql.
    sql: `
      CREATE INDEX runs_notification_pending ON runs (parent_session_id)
        WHERE json_extract(notification, '$.delivered_at') IS NULL AND json_extract(notification, '$.suppressed') = 0;
    `,
  },
  {
    version: 3,
    name: 'asks for approval and the rules people set for a session',
    sql: `
      CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        run_id TEXT,
        agent TEXT NOT NULL,
        tool TEXT NOT NULL,
        argument TEXT,
        risk TEXT NOT NULL,
        summary TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        resolved_at TEXT,
        resolved_by TEXT,
        always INTEGER NOT NULL DEFAULT 0,
        owner TEXT
      );
      CREATE INDEX approvals_status ON approvals (status, created_at);
      CREATE INDEX approvals_session ON approvals (session_id, created_at);

      CREATE TABLE session_rules (
        session_id TEXT NOT NULL,
        rule TEXT NOT NULL,
        decision TEXT NOT NULL,
        created_at TEXT NOT NULL,
        approval_id TEXT,
        PRIMARY KEY (session_id, rule)
      );
    `,
  },
  {
    version: 4,
    name: "the tokens of a session's own agent (token budgets)",
    sql: `
      ALTER TABLE sessions ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE sessions ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 5,
    name: 'the lease index keeps only runs that hold a lease',
    // A finished run gives up its lease (lease_owner NULL), so most runs of a file hold none: they
    // leave the index instead of piling up under NULL, and the lease queries (`lease_owner = ?`,
    // which implies NOT NULL) use the smaller index.
    sql: `
      DROP INDEX runs_lease_owner;
      CREATE INDEX runs_lease_owner ON runs (lease_owner) WHERE lease_owner IS NOT NULL;
    `,
  },
  {
    version: 6,
    name: "a row of run_events may hold several of a run's events",
    // A commit writes each run's new events as one row (a running loop makes about four per
    // step) instead of a row each: `seq` is the first event's, `last_seq` the last one's, and
    // `data` the events as a JSON array of [at, type, data] arrays (`type` is 'events', `at` the
    // first event's time). A row of one event is written as before, with `last_seq` NULL, so every
    // row stored earlier reads as it did.
    sql: `
      ALTER TABLE run_events ADD COLUMN last_seq INTEGER;
    `,
  },
  {
    version: 7,
    name: 'what an ask for approval shows of its call (a diff or a command)',
    // JSON of an ApprovalPreview; NULL for asks stored earlier and for tools without a preview.
    sql: `
      ALTER TABLE approvals ADD COLUMN preview TEXT;
    `,
  },
  {
    version: 8,
    name: "the JSON Schema a run's result must match (output_schema)",
    // JSON of the schema; NULL for runs with a free-text result and runs stored earlier. A
    // follow-up run reads it back to keep the schema of the run it follows.
    sql: `
      ALTER TABLE runs ADD COLUMN output_schema TEXT;
      `,
  },
  {
    version: 9,
    name: 'forked runs name what they copied; prompt-cache tokens of a session',
    // forked_from: the parent run or session whose conversation a forked run's child session
    // started with (NULL for every other run). The cache columns are parts of input_tokens.
    sql: `
      ALTER TABLE runs ADD COLUMN forked_from TEXT;
      ALTER TABLE sessions ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE sessions ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 10,
    name: "a run's own git worktree (isolation: worktree)",
    // JSON of a RunWorktree; NULL for runs in the workspace and runs stored earlier.
    sql: `
      ALTER TABLE runs ADD COLUMN worktree TEXT;
      `,
  },
  {
    version: 11,
    name: 'workflows, and the workflow call that made a run',
    // A run of a workflow keeps its workflow's id and its durable key as JSON ({"id","key"}) and
    // a hash of the call's inputs, written with the run in one commit; the index finds a
    // workflow's runs. A workflow's JSON fields are stored as text, as a run's are.
    sql: `
      ALTER TABLE runs ADD COLUMN workflow TEXT;
      ALTER TABLE runs ADD COLUMN input_hash TEXT;
      CREATE INDEX runs_workflow ON runs (json_extract(workflow, '$.id'), created_at) WHERE workflow IS NOT NULL;
      CREATE TABLE workflows (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        session_id TEXT NOT NULL,
        parent_run_id TEXT,
        depth INTEGER NOT NULL,
        input TEXT NOT NULL,
        output TEXT NOT NULL,
        error TEXT,
        phases TEXT NOT NULL,
        log TEXT NOT NULL,
        source TEXT NOT NULL,
        max_runs INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        ended_at TEXT,
        lease_owner TEXT,
        lease_expires_at TEXT,
        stop_requested_at TEXT
      );
      CREATE INDEX workflows_created_at ON workflows (created_at, id);
      CREATE INDEX workflows_status ON workflows (status) WHERE status = 'running';
      `,
  },
  {
    version: 12,
    name: 'messages sent to a run that already started (its inbox)',
    // JSON array of RunMessage, in the order sent; NULL for a run nobody sent a message to.
    sql: `
      ALTER TABLE runs ADD COLUMN messages TEXT;
      `,
  },
  {
    version: 13,
    name: 'the agent program that carries a run out (harness)',
    // JSON {name, session_id, pid, host}; NULL for runs of cadre's own loop and runs stored earlier.
    sql: `
      ALTER TABLE runs ADD COLUMN harness TEXT;
    `,
  },
  {
    version: 14,
    name: "a subagent's answer stored once: messages may refer to a run's result",
    // No table changes: from this version on, a message's `content` may be the JSON object
    // {"cadre_result_of": [run ids], "content": ...} where the text of a finished run's result
    // stood (see store/core/result-refs.ts). Rows stored earlier, with the full text, read as they
    // did; an older build, which would read such a message as it is stored, refuses the file.
    sql: `
      -- messages.content may refer to runs.result (cadre_result_of)
    `,
  },
];

/** The newest schema version this build writes. */
export const latestVersion = migrations[migrations.length - 1].version;

/** SQLITE_BUSY: another connection holds a lock this one needs. */
const busyCode = 5;

/**
 * Another connection has the database open while it needs an upgrade (see {@link upgrade}): an
 * older cadre still running on it, or another new one upgrading it at this moment.
 */
export class UpgradeBusyError extends Error {
  /** The schema version the database has. */
  readonly version: number;

  constructor(version: number) {
    super(`The database is in use by another process while it needs an upgrade from schema version ${version}.`);
    this.name = 'UpgradeBusyError';
    this.version = version;
  }
}

/** What {@link migrate} did to an existing database: the copy it made before upgrading it. */
export interface Upgrade {
  from: number;
  to: number;
  /** The copy of the database as it was, made by SQLite (`VACUUM INTO`). */
  backup: string;
}

/**
 * Brings the database up to the newest schema. A new file (no tables yet) gets every step; two
 * processes creating it at once are safe, the version being read again under the write lock.
 *
 * An existing database of an older schema is upgraded in place (see {@link upgrade}): only
 * while no other connection has it open, after SQLite copied it aside to `<file>.bak-v<N>`.
 * @throws {UpgradeBusyError} when another connection has the file open.
 * @returns the upgrade made, or null (the schema was new or already current).
 */
export function migrate(database: DatabaseSync, label: string, path: string | null = null, busyTimeoutMs = 5000): Upgrade | null {
  const current = readVersion(database);
  if (current === latestVersion) return null;
  if (current > 0 && path !== null) return upgrade(database, label, path, current, busyTimeoutMs);
  database.exec('BEGIN IMMEDIATE');
  try {
    applySteps(database, label, readVersion(database));
    database.exec('COMMIT');
  } catch (error) {
    if (database.isTransaction) database.exec('ROLLBACK');
    throw error;
  }
  return null;
}

/**
 * Upgrades a database an older cadre wrote. A newer schema is refused by older builds, so the
 * upgrade cannot be undone but from a copy, and must not happen under a live older process.
 * This connection takes the file's exclusive lock, which it gets only while no other connection
 * has the file open (in WAL mode each holds a shared lock for as long as it is open), and keeps
 * it until done, so no process opens the file meanwhile. Connections of this same process (which
 * share its locks, so another process cannot be told from them by the lock alone) are told apart
 * through the kernel's table of locks where there is one (Linux): held only by this process, the
 * file is upgraded under the write lock instead. Then SQLite copies the database, every committed
 * row in its WAL included, to `<file>.bak-v<N>` (`VACUUM INTO`: a copy of the file alone could
 * miss rows still in the WAL, or catch a page half written, and opening the file behind SQLite
 * would drop this process's locks on it), and the steps run in one transaction.
 * @throws {UpgradeBusyError} when another process has the file open (the caller waits and retries).
 */
function upgrade(database: DatabaseSync, label: string, path: string, version: number, busyTimeoutMs: number): Upgrade | null {
  database.exec('PRAGMA locking_mode = EXCLUSIVE');
  // Waiting is the caller's: it opens the file again, so a second new cadre upgrading it too can proceed.
  database.exec('PRAGMA busy_timeout = 0');
  try {
    try {
      // In exclusive locking mode the lock a write transaction takes is kept once it ends.
      database.exec('BEGIN EXCLUSIVE');
      database.exec('COMMIT');
    } catch (error) {
      if (database.isTransaction) database.exec('ROLLBACK');
      if (((error as { errcode?: number }).errcode ?? 0) % 256 !== busyCode) throw error;
      if (otherProcessHolds(path) !== false) throw new UpgradeBusyError(version);
      database.exec('PRAGMA locking_mode = NORMAL');
    }
    database.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    // Another new cadre may have upgraded it while this one waited.
    const from = readVersion(database);
    if (from === latestVersion) return null;
    const backup = backupPath(path, from);
    database.prepare('VACUUM INTO ?').run(backup);
    database.exec('BEGIN IMMEDIATE');
    try {
      applySteps(database, label, from);
      database.exec('COMMIT');
    } catch (error) {
      if (database.isTransaction) database.exec('ROLLBACK');
      throw error;
    }
    return { from, to: latestVersion, backup };
  } finally {
    database.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    // Back to shared locking; the exclusive lock goes with the next read. That read can only
    // fail while another process upgrades the file, when this connection is closed anyway.
    database.exec('PRAGMA locking_mode = NORMAL');
    try {
      database.prepare('SELECT COUNT(*) AS tables FROM sqlite_schema').get();
    } catch {
      // The error that brought us here (or the caller's retry) says more.
    }
  }
}

/**
 * Whether a process other than this one holds a lock on the file at `path`, from the kernel's
 * table of POSIX locks (`/proc/locks`, Linux); null where that table cannot be read.
 */
export function otherProcessHolds(path: string): boolean | null {
  if (process.platform !== 'linux') return null;
  let table: string;
  try {
    table = readFileSync('/proc/locks', 'utf8');
  } catch {
    return null;
  }
  const { dev, ino } = statSync(path);
  // The kernel's encoding of a device number: its major and minor numbers, shown in hex.
  const major = (dev >> 8) & 0xfff;
  const minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
  const file = `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${ino}`;
  for (const line of table.split('\n')) {
    // "1: POSIX  ADVISORY  READ 1234 08:01:5678 128 128", with "->" after the number for a waiter.
    const fields = line
      .trim()
      .split(/\s+/)
      .filter((field) => field !== '->');
    if (fields[5] === file && fields[4] !== String(process.pid)) return true;
  }
  return false;
}

/** `<file>.bak-v<N>`, or `<file>.bak-v<N>-2` (and so on) when an earlier upgrade left one. */
function backupPath(path: string, version: number): string {
  const base = `${path}.bak-v${version}`;
  let candidate = base;
  for (let index = 2; existsSync(candidate); index++) candidate = `${base}-${index}`;
  return candidate;
}

/** Runs the steps after `current`, in the open transaction. */
function applySteps(database: DatabaseSync, label: string, current: number): void {
  if (current > latestVersion) {
    throw new ConfigError(`The database ${label} has schema version ${current}, newer than this build of cadre knows (${latestVersion}). Upgrade cadre.`);
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    database.exec(migration.sql);
    database.exec(`PRAGMA user_version = ${migration.version}`);
  }
}

function readVersion(database: DatabaseSync): number {
  const row = database.prepare('PRAGMA user_version').get() as { user_version: number };
  return row.user_version;
}

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
];

/**
 * Brings the database up to the newest schema. Safe when two processes open a new file at
 * once: the version is read again under the write lock.
 */
export function migrate(database: DatabaseSync, label: string): void {
  const latest = migrations[migrations.length - 1].version;
  if (readVersion(database) === latest) return;
  database.exec('BEGIN IMMEDIATE');
  try {
    const current = readVersion(database);
    if (current > latest) {
      throw new ConfigError(
        `The database ${label} has schema version ${current}, newer than this build of cadre knows (${latest}). Upgrade cadre.`,
      );
    }
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      database.exec(migration.sql);
      database.exec(`PRAGMA user_version = ${migration.version}`);
    }
    database.exec('COMMIT');
  } catch (error) {
    if (database.isTransaction) database.exec('ROLLBACK');
    throw error;
  }
}

function readVersion(database: DatabaseSync): number {
  const row = database.prepare('PRAGMA user_version').get() as { user_version: number };
  return row.user_version;
}

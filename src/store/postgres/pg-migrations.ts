import type { PoolClient } from 'pg';
import { ConfigError } from '../../errors/config-error.ts';

/** One numbered step of the Postgres schema. Steps only ever get added, never edited once released. */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

// Text columns sort byte by byte (COLLATE "C"), as SQLite does, so ids and ISO times order the
// same on both engines whatever the database's locale. JSON fields are stored as text, exactly
// as given, so exports are the same byte for byte.
const text = 'TEXT COLLATE "C"';

/** The schema, step by step; `cadre_schema_migrations` records each applied version. */
export const pgMigrations: readonly PgMigration[] = [
  {
    version: 1,
    name: 'sessions, messages, runs, run events, asks for approval and session rules',
    sql: `
      CREATE TABLE sessions (
        id ${text} PRIMARY KEY,
        agent ${text} NOT NULL,
        model ${text} NOT NULL,
        created_at ${text} NOT NULL,
        status ${text} NOT NULL,
        parent_run_id ${text},
        auto_resumes INTEGER NOT NULL DEFAULT 0,
        user_canceled_at ${text},
        input_tokens BIGINT NOT NULL DEFAULT 0,
        output_tokens BIGINT NOT NULL DEFAULT 0
      );
      CREATE INDEX sessions_created_at ON sessions (created_at, id);

      CREATE TABLE messages (
        session_id ${text} NOT NULL,
        seq INTEGER NOT NULL,
        role ${text} NOT NULL,
        content TEXT NOT NULL,
        created_at ${text} NOT NULL,
        PRIMARY KEY (session_id, seq)
      );

      CREATE TABLE runs (
        id ${text} PRIMARY KEY,
        parent_session_id ${text} NOT NULL,
        child_session_id ${text} NOT NULL,
        parent_run_id ${text},
        tool_call_id ${text},
        agent ${text} NOT NULL,
        description TEXT NOT NULL,
        task TEXT NOT NULL,
        context TEXT,
        mode ${text} NOT NULL,
        status ${text} NOT NULL,
        depth INTEGER NOT NULL,
        max_turns INTEGER NOT NULL,
        turns INTEGER NOT NULL,
        created_at ${text} NOT NULL,
        started_at ${text},
        ended_at ${text},
        promoted_at ${text},
        consumed_at ${text},
        last_activity TEXT,
        result TEXT,
        partial_result TEXT,
        error TEXT,
        usage TEXT NOT NULL,
        warnings TEXT NOT NULL,
        notification TEXT,
        resumed_from ${text},
        lease_owner ${text},
        lease_expires_at ${text},
        stop_requested_at ${text},
        stop_requested_by ${text},
        stop_reason TEXT
      );
      CREATE INDEX runs_parent_session ON runs (parent_session_id, created_at);
      CREATE INDEX runs_parent_run ON runs (parent_run_id);
      CREATE INDEX runs_status ON runs (status);
      CREATE INDEX runs_lease_owner ON runs (lease_owner);
      CREATE INDEX runs_notification_pending ON runs (parent_session_id)
        WHERE notification IS NOT NULL AND (notification::jsonb ->> 'delivered_at') IS NULL AND (notification::jsonb ->> 'suppressed') = 'false';

      CREATE TABLE run_events (
        run_id ${text} NOT NULL,
        seq INTEGER NOT NULL,
        at ${text} NOT NULL,
        type ${text} NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      );

      CREATE TABLE approvals (
        id ${text} PRIMARY KEY,
        session_id ${text} NOT NULL,
        run_id ${text},
        agent ${text} NOT NULL,
        tool ${text} NOT NULL,
        argument TEXT,
        risk ${text} NOT NULL,
        summary TEXT NOT NULL,
        status ${text} NOT NULL,
        created_at ${text} NOT NULL,
        resolved_at ${text},
        resolved_by ${text},
        always BOOLEAN NOT NULL DEFAULT false,
        owner ${text}
      );
      CREATE INDEX approvals_status ON approvals (status, created_at);
      CREATE INDEX approvals_session ON approvals (session_id, created_at);

      CREATE TABLE session_rules (
        session_id ${text} NOT NULL,
        rule ${text} NOT NULL,
        decision ${text} NOT NULL,
        created_at ${text} NOT NULL,
        approval_id ${text},
        PRIMARY KEY (session_id, rule)
      );
    `,
  },
  {
    version: 2,
    name: "run events move to run_event_rows, where a row may hold several of a run's events",
    // A commit writes each run's held events in as few rows as fit about 1,800 characters each
    // (a running loop makes about four per step) instead of a row each: `seq` is the first
    // event's, `last_seq` the last one's, `data` the events as a JSON array of [at, type, data]
    // arrays (`type` is 'events', `at` the first event's time), as the SQLite store's schema 6.
    // A row of one event is written as before, with `last_seq` NULL, so every row stored earlier
    // reads as it did. Rows of one run never share a seq, so the primary key still catches two
    // processes appending the same seq: a packed row starts at the seq after the last one its
    // writer saw stored. The table is renamed so that an older cadre still running on the
    // database fails at its next event instead of taking a seq inside a packed row (it reads
    // the last seq as MAX(seq)); its store then stops, and it must be upgraded.
    sql: `
      ALTER TABLE run_events RENAME TO run_event_rows;
      ALTER INDEX run_events_pkey RENAME TO run_event_rows_pkey;
      ALTER TABLE run_event_rows ADD COLUMN last_seq INTEGER;
    `,
  },
  {
    version: 3,
    name: 'what an ask for approval shows of its call (a diff or a command)',
    // JSON of an ApprovalPreview, as the SQLite store's schema 7; NULL for asks stored earlier.
    sql: `
      ALTER TABLE approvals ADD COLUMN preview TEXT;
    `,
  },
  {
    version: 4,
    name: "the JSON Schema a run's result must match (output_schema)",
    // JSON of the schema, as the SQLite store's schema 8; NULL for free-text runs and runs stored earlier.
    sql: `
      ALTER TABLE runs ADD COLUMN output_schema TEXT;
      `,
  },
  {
    version: 5,
    name: 'forked runs name what they copied; prompt-cache tokens of a session',
    // As the SQLite store's schema 9.
    sql: `
      ALTER TABLE runs ADD COLUMN forked_from TEXT;
      ALTER TABLE sessions ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE sessions ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 6,
    name: "a run's own git worktree (isolation: worktree)",
    // JSON of a RunWorktree, as the SQLite store's schema 10; NULL for runs in the workspace.
    sql: `
      ALTER TABLE runs ADD COLUMN worktree TEXT;
      `,
  },
  {
    version: 7,
    name: 'workflows, and the workflow call that made a run',
    // As the SQLite store's schema 11: a run's workflow {id, key} as JSON text and its input hash.
    sql: `
      ALTER TABLE runs ADD COLUMN workflow TEXT;
      ALTER TABLE runs ADD COLUMN input_hash TEXT;
      CREATE INDEX runs_workflow ON runs (((workflow::jsonb) ->> 'id'), created_at) WHERE workflow IS NOT NULL;
      CREATE TABLE workflows (
        id ${text} PRIMARY KEY,
        name TEXT NOT NULL,
        status ${text} NOT NULL,
        session_id ${text} NOT NULL,
        parent_run_id ${text},
        depth INTEGER NOT NULL,
        input TEXT NOT NULL,
        output TEXT NOT NULL,
        error TEXT,
        phases TEXT NOT NULL,
        log TEXT NOT NULL,
        source TEXT NOT NULL,
        max_runs INTEGER,
        created_at ${text} NOT NULL,
        updated_at ${text} NOT NULL,
        ended_at ${text},
        lease_owner ${text},
        lease_expires_at ${text},
        stop_requested_at ${text}
      );
      CREATE INDEX workflows_created_at ON workflows (created_at, id);
      `,
  },
  {
    version: 8,
    name: 'messages sent to a run that already started (its inbox)',
    // JSON array of RunMessage, in the order sent, as the SQLite store's schema 12; NULL for a run
    // nobody sent a message to.
    sql: `
      ALTER TABLE runs ADD COLUMN messages TEXT;
      `,
  },
  {
    version: 9,
    name: 'the agent program that carries a run out (harness)',
    // JSON {name, session_id, pid, host}, as the SQLite store's schema 13.
    sql: `
      ALTER TABLE runs ADD COLUMN harness TEXT;
    `,
  },
  {
    version: 10,
    name: "a subagent's answer stored once: messages may refer to a run's result",
    // As the SQLite store's schema 14: no table changes; a message's `content` may be the JSON
    // object {"cadre_result_of": [run ids], "content": ...} (see store/core/result-refs.ts), which
    // an older build must not read, so it refuses the database.
    sql: `
      -- messages.content may refer to runs.result (cadre_result_of)
    `,
  },
];

/** The advisory lock that serializes migrations of every cadre process on one database. */
const migrationLock = 0x63616472; // 'cadr'

/**
 * Brings the schema up to the newest version, in one transaction under an advisory lock, so
 * processes starting together migrate once. A database newer than this build is refused.
 */
export async function migratePostgres(client: PoolClient, label: string): Promise<void> {
  const latest = pgMigrations[pgMigrations.length - 1].version;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [migrationLock]);
    await client.query('CREATE TABLE IF NOT EXISTS cadre_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const { rows } = await client.query<{ version: number | null }>('SELECT MAX(version) AS version FROM cadre_schema_migrations');
    const current = rows[0]?.version ?? 0;
    if (current > latest) {
      throw new ConfigError(`The database ${label} has schema version ${current}, newer than this build of cadre knows (${latest}). Upgrade cadre.`);
    }
    for (const migration of pgMigrations) {
      if (migration.version <= current) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO cadre_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        new Date().toISOString(),
      ]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

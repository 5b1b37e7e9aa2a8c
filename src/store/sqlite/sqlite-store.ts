import type { SQLInputValue } from 'node:sqlite';
import { isFinished, type MessageRecord, type NewRunEvent, type RunRecord } from '../records.ts';
import type { RunPatch, Store } from '../store.ts';
import { createGroupCommit } from './group-commit.ts';
import { openDatabase } from './open-database.ts';
import { runQuerySql } from './run-query-sql.ts';
import {
  messageFromRow,
  patchColumns,
  patchableRunColumns,
  patchableSessionColumns,
  runColumns,
  runEventFromRow,
  runColumnList,
  runFromRow,
  runToSql,
  runValueToSql,
  sessionFromRow,
} from './rows.ts';
import { setBounded } from '../../util/bounded-map.ts';
import { createStatementCache } from './statement-cache.ts';

/** Options of `createSqliteStore`. */
export interface SqliteStoreOptions {
  /** A database file (its folder is created), or `:memory:` for a private database in memory. */
  path: string;
  /**
   * How long a write waits for another process (a `cadre stop`) to release the write lock.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

type Row = Record<string, unknown>;

const activeStatuses = ['queued', 'running'] as const;

/** Sessions and runs whose last seq is kept in memory, each. */
export const seqCacheSize = 20_000;

/** SQLITE_CONSTRAINT_PRIMARYKEY: the (run_id, seq) or (session_id, seq) is taken. */
const primaryKeyViolation = 1555;

/**
 * The embedded store: one SQLite file in WAL mode, written with group commit (see
 * `createGroupCommit`). Reads see this process's writes at once; writes resolve once
 * committed, which survives a crash of the process (`synchronous = NORMAL`).
 *
 * @example
 * const store = createSqliteStore({ path: './.cadre/cadre.db' });
 */
export function createSqliteStore({ path, busyTimeoutMs = 5000 }: SqliteStoreOptions): Store {
  const database = openDatabase(path, busyTimeoutMs);
  const prepared = createStatementCache(database);
  // The last seq used per session and per run, read from the table on first use or once
  // forgotten (both are bounded). Normally only this process appends to its runs and sessions;
  // a collision makes it read the table again.
  const lastMessageSeq = new Map<string, number>();
  const lastEventSeq = new Map<string, number>();
  const commits = createGroupCommit(database, {
    onUndo() {
      lastMessageSeq.clear();
      lastEventSeq.clear();
    },
  });
  let closed = false;

  const selectRunSql = `SELECT ${runColumnList} FROM runs WHERE id = ?`;
  const insertRunSql = `INSERT INTO runs (${runColumns.join(', ')}) VALUES (${runColumns.map(() => '?').join(', ')})`;

  function ensureOpen(): void {
    if (closed) throw new Error(`The store ${path} is closed.`);
  }

  /**
   * Inserts a row under the next seq of `key` and returns the seq. Should another process have
   * appended meanwhile, the seq collides: the counter is read again and the insert retried.
   */
  function insertWithNextSeq(cache: Map<string, number>, key: string, maxSql: string, insert: (seq: number) => void): number {
    for (let attempt = 0; ; attempt++) {
      let last = cache.get(key);
      if (last === undefined) last = (prepared(maxSql).get(key) as { last: number }).last;
      setBounded(cache, key, last + 1, seqCacheSize);
      try {
        insert(last + 1);
        return last + 1;
      } catch (error) {
        cache.delete(key);
        if (attempt > 0 || (error as { errcode?: number }).errcode !== primaryKeyViolation) throw error;
      }
    }
  }

  function insertEvent(event: NewRunEvent): void {
    const data = JSON.stringify(event.data ?? {});
    event.seq = insertWithNextSeq(lastEventSeq, event.run_id, 'SELECT COALESCE(MAX(seq), 0) AS last FROM run_events WHERE run_id = ?', (seq) =>
      prepared('INSERT INTO run_events (run_id, seq, at, type, data) VALUES (?, ?, ?, ?, ?)').run(event.run_id, seq, event.at, event.type, data),
    );
  }

  /**
   * The SET list of a change to run `id`: `leading` assignments, then the patch. Checks that the
   * patch leaves the status alone and that every event belongs to the run; a bad call is
   * rejected before anything is written.
   */
  function changeRun<T>(
    id: string,
    patch: RunPatch,
    events: readonly NewRunEvent[],
    leading: string[],
    change: (assignments: { sets: string; values: SQLInputValue[] }) => Promise<T>,
  ): Promise<T> {
    try {
      for (const event of events) if (event.run_id !== id) throw mismatchedEvent(id, event);
      if ((patch as { status?: unknown }).status !== undefined) {
        throw new TypeError("A run patch cannot change 'status': use transitionRun, which checks the move and writes its event.");
      }
      const columns = patchColumns(patch, patchableRunColumns, 'A run patch');
      const sets = [...leading, ...columns.map((column) => `${column} = ?`)].join(', ');
      const values = columns.map((column) => runValueToSql(column, patch[column as keyof RunPatch]));
      return change({ sets, values });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** SQL texts by shape, so a hot statement is found by a short key rather than rebuilt and hashed whole. */
  const sqlTexts = new Map<string, string>();
  function sqlText(key: string, build: () => string): string {
    let sql = sqlTexts.get(key);
    if (sql === undefined) {
      sql = build();
      if (sqlTexts.size >= 500) sqlTexts.clear();
      sqlTexts.set(key, sql);
    }
    return sql;
  }

  /** The run a statement returns (SELECT or RETURNING the `runColumnList`), or null. */
  function runReturnedBy(sql: string, ...parameters: SQLInputValue[]): RunRecord | null {
    const row = prepared(sql, { returnArrays: true }).get(...parameters) as unknown[] | undefined;
    return row ? runFromRow(row) : null;
  }

  function write<T>(work: () => T, atomic = false): Promise<T> {
    if (closed) return Promise.reject(new Error(`The store ${path} is closed.`));
    return commits.write(work, { atomic });
  }

  return {
    description: `sqlite:${path}`,

    createSession(session) {
      return write(() => {
        prepared(
          'INSERT INTO sessions (id, agent, model, created_at, status, parent_run_id, auto_resumes, user_canceled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        ).run(
          session.id,
          session.agent,
          session.model,
          session.created_at,
          session.status,
          session.parent_run_id,
          session.auto_resumes,
          session.user_canceled_at,
        );
        // A new session has no messages yet: its first one needs no MAX(seq) query.
        setBounded(lastMessageSeq, session.id, 0, seqCacheSize);
      });
    },

    async getSession(id) {
      ensureOpen();
      const row = prepared('SELECT * FROM sessions WHERE id = ?').get(id) as Row | undefined;
      return row ? sessionFromRow(row) : null;
    },

    async listSessions({ limit, primaryOnly = false } = {}) {
      ensureOpen();
      const where = primaryOnly ? ' WHERE parent_run_id IS NULL' : '';
      const rows = prepared(`SELECT * FROM sessions${where} ORDER BY created_at DESC, id DESC LIMIT ?`).all(
        limit === undefined ? -1 : Math.max(0, Math.floor(limit)),
      );
      return rows.map((row) => sessionFromRow(row as Row));
    },

    updateSession(id, patch) {
      let columns: string[];
      try {
        columns = patchColumns(patch, patchableSessionColumns, 'A session patch');
      } catch (error) {
        return Promise.reject(error);
      }
      return write(() => {
        if (columns.length === 0) return;
        const sets = columns.map((column) => `${column} = ?`).join(', ');
        const values = columns.map((column) => (patch as Record<string, SQLInputValue>)[column] ?? null);
        prepared(`UPDATE sessions SET ${sets} WHERE id = ?`).run(...values, id);
      });
    },

    appendMessages(messages) {
      return write(() => {
        const stored: MessageRecord[] = [];
        for (const message of messages) {
          const content = JSON.stringify(message.content ?? null);
          const seq = insertWithNextSeq(lastMessageSeq, message.session_id, 'SELECT COALESCE(MAX(seq), 0) AS last FROM messages WHERE session_id = ?', (next) =>
            prepared('INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)').run(
              message.session_id,
              next,
              message.role,
              content,
              message.created_at,
            ),
          );
          stored.push({ session_id: message.session_id, seq, role: message.role, content: message.content, created_at: message.created_at });
        }
        return stored;
      }, messages.length > 1);
    },

    updateMessageContent(sessionId, seq, content) {
      return write(() => {
        prepared('UPDATE messages SET content = ? WHERE session_id = ? AND seq = ?').run(JSON.stringify(content ?? null), sessionId, seq);
      });
    },

    async listMessages(sessionId, { afterSeq = 0 } = {}) {
      ensureOpen();
      const rows = prepared('SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq').all(sessionId, afterSeq);
      return rows.map((row) => messageFromRow(row as Row));
    },

    insertRun(run, event) {
      if (event.run_id !== run.id) return Promise.reject(mismatchedEvent(run.id, event));
      return write(() => {
        prepared(insertRunSql).run(...runToSql(run));
        setBounded(lastEventSeq, run.id, 0, seqCacheSize);
        insertEvent(event);
      }, true);
    },

    transitionRun({ id, from, to, patch = {}, event }) {
      return changeRun(id, patch, [event], ['status = ?'], ({ sets, values }) => {
        // A finished status never changes, whatever the caller allows.
        const allowed = from.filter((status) => !isFinished(status));
        const sql = sqlText(`transition ${allowed.length} ${sets}`, () => {
          const fromList = allowed.length > 0 ? allowed.map(() => '?').join(', ') : 'NULL';
          return `UPDATE runs SET ${sets} WHERE id = ? AND status IN (${fromList}) RETURNING ${runColumnList}`;
        });
        return write(() => {
          const run = runReturnedBy(sql, to, ...values, id, ...allowed);
          if (run) insertEvent(event);
          return run;
        }, true);
      });
    },

    updateRun(id, patch, events = []) {
      return changeRun(id, patch, events, [], ({ sets, values }) =>
        write(() => {
          const run =
            sets === ''
              ? runReturnedBy(selectRunSql, id)
              : runReturnedBy(sqlText(`update ${sets}`, () => `UPDATE runs SET ${sets} WHERE id = ? RETURNING ${runColumnList}`), ...values, id);
          if (run) for (const event of events) insertEvent(event);
          return run;
        }, events.length > 0),
      );
    },

    patchRun(id, patch, events = []) {
      return changeRun(id, patch, events, [], ({ sets, values }) =>
        write(() => {
          const found =
            sets === ''
              ? prepared('SELECT 1 AS found FROM runs WHERE id = ?').get(id) !== undefined
              : Number(prepared(sqlText(`patch ${sets}`, () => `UPDATE runs SET ${sets} WHERE id = ?`)).run(...values, id).changes) > 0;
          if (found) for (const event of events) insertEvent(event);
          return found;
        }, events.length > 0),
      );
    },

    appendRunEvents(events) {
      return write(() => {
        for (const event of events) insertEvent(event);
      }, events.length > 1);
    },

    async getRun(id) {
      ensureOpen();
      return runReturnedBy(selectRunSql, id);
    },

    async listRuns(query) {
      ensureOpen();
      const { sql, parameters } = runQuerySql(query);
      const rows = prepared(sql, { returnArrays: true }).all(...parameters) as unknown as unknown[][];
      return rows.map(runFromRow);
    },

    async listRunEvents(runId, { afterSeq = 0, limit } = {}) {
      ensureOpen();
      const rows = prepared('SELECT * FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(
        runId,
        afterSeq,
        limit === undefined ? -1 : Math.max(0, Math.floor(limit)),
      );
      return rows.map((row) => runEventFromRow(row as Row));
    },

    renewLeases(owner, expiresAt) {
      return write(() => {
        const result = prepared('UPDATE runs SET lease_expires_at = ? WHERE lease_owner = ? AND status IN (?, ?)').run(
          expiresAt,
          owner,
          ...activeStatuses,
        );
        return Number(result.changes);
      });
    },

    claimRun(id, owner, expiresAt, expiredBefore) {
      return write(() => {
        const run = runReturnedBy(
          `UPDATE runs SET lease_owner = ?, lease_expires_at = ? WHERE id = ? AND status IN (?, ?) AND (lease_expires_at IS NULL OR lease_expires_at < ?) RETURNING ${runColumnList}`,
          owner,
          expiresAt,
          id,
          ...activeStatuses,
          expiredBefore,
        );
        // The previous owner was another process that may have appended events.
        if (run) lastEventSeq.delete(id);
        return run;
      });
    },

    flush() {
      if (closed) return Promise.resolve();
      return commits.flush();
    },

    async close() {
      if (closed) return;
      closed = true;
      // The commit runs synchronously inside flush, so the connection can close right after.
      const flushed = commits.flush();
      database.close();
      await flushed;
    },
  };
}

function mismatchedEvent(runId: string, event: NewRunEvent): TypeError {
  return new TypeError(`An event of run '${event.run_id}' was passed with run '${runId}'.`);
}

import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { SessionRecord } from '../records.ts';
import type { Store } from '../store.ts';
import { patchColumns, patchableSessionColumns, sessionColumns, sessionFromRow, sessionRecord, usageOfRow } from '../core/record-rows.ts';
import type { SeqCounters } from '../core/seq-counters.ts';
import { setBounded } from '../../util/bounded-map.ts';
import { whenValid } from '../core/run-fields.ts';

type SessionMethods = Pick<Store, 'createSession' | 'getSession' | 'listSessions' | 'updateSession' | 'addSessionUsage' | 'getSessionUsage'>;

/** Sessions kept from one transaction to the next, at most. */
const knownSessionsLimit = 4096;

const insertSessionSql = `INSERT INTO sessions (${sessionColumns.join(', ')}) VALUES (${sessionColumns.map(() => '?').join(', ')})`;

/** What the session methods need of the SQLite store. */
export interface SqliteSessionsContext {
  prepared: (sql: string) => StatementSync;
  write: <T>(work: () => T) => Promise<T>;
  ensureOpen: () => void;
  /** Whether the sessions kept from earlier transactions are still as stored (see `knownIsCurrent`). */
  knownIsCurrent: () => boolean;
  messageSeqs: SeqCounters;
}

/** The session methods of the SQLite store, and `forget` for when the sessions it keeps may be stale. */
export function createSqliteSessions({ prepared, write, ensureOpen, knownIsCurrent, messageSeqs }: SqliteSessionsContext): {
  methods: SessionMethods;
  forget(): void;
} {
  // Sessions as this process wrote or read them, kept like the known runs: a run's setup reads
  // its parent and child sessions, which this process just created.
  const known = new Map<string, SessionRecord>();
  const methods: SessionMethods = {
    createSession(session) {
      return write(() => {
        prepared(insertSessionSql).run(...sessionColumns.map((column) => session[column] as SQLInputValue));
        setBounded(known, session.id, sessionRecord(session), knownSessionsLimit);
        // A new session has no messages yet: its first one needs no MAX(seq) query.
        messageSeqs.learn(session.id, 0);
      });
    },

    async getSession(id) {
      ensureOpen();
      const kept = known.get(id);
      if (kept !== undefined && knownIsCurrent()) return { ...kept };
      const row = prepared('SELECT * FROM sessions WHERE id = ?').get(id) as Record<string, unknown> | undefined;
      if (row === undefined) return null;
      const session = sessionFromRow(row);
      setBounded(known, id, session, knownSessionsLimit);
      return { ...session };
    },

    async listSessions({ limit, primaryOnly = false } = {}) {
      ensureOpen();
      const where = primaryOnly ? ' WHERE parent_run_id IS NULL' : '';
      const rows = prepared(`SELECT * FROM sessions${where} ORDER BY created_at DESC, id DESC LIMIT ?`).all(
        limit === undefined ? -1 : Math.max(0, Math.floor(limit)),
      );
      return rows.map((row) => sessionFromRow(row as Record<string, unknown>));
    },

    updateSession(id, patch) {
      return whenValid(
        () => patchColumns(patch, patchableSessionColumns, 'A session patch'),
        (columns) =>
          write(() => {
            if (columns.length === 0) return;
            const sets = columns.map((column) => `${column} = ?`).join(', ');
            const values = columns.map((column) => (patch as Record<string, SQLInputValue>)[column] ?? null);
            prepared(`UPDATE sessions SET ${sets} WHERE id = ?`).run(...values, id);
            const kept = known.get(id);
            if (kept !== undefined) columns.forEach((column, index) => ((kept as unknown as Record<string, unknown>)[column] = values[index]));
          }),
      );
    },

    addSessionUsage(id, usage) {
      return write(() => {
        prepared(
          'UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ? WHERE id = ?',
        ).run(usage.input_tokens, usage.output_tokens, usage.cache_read_tokens ?? 0, usage.cache_write_tokens ?? 0, id);
      });
    },

    async getSessionUsage(id) {
      ensureOpen();
      const row = prepared('SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens FROM sessions WHERE id = ?').get(id) as
        | { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_write_tokens: number }
        | undefined;
      return row ? usageOfRow(row) : null;
    },
  };
  return { methods, forget: () => known.clear() };
}

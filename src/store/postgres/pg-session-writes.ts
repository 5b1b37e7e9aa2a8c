import type { SessionRecord } from '../records.ts';
import { sessionColumns } from '../core/record-rows.ts';
import { integerColumns } from '../core/run-rows.ts';
import type { PgMergeable } from './pg-outbox.ts';

/**
 * Inserts sessions, each unless one with its id is stored (the sessions a fan-out starts in one
 * event-loop turn, in one statement); each gets whether it was inserted.
 */
export function insertSessionOp(session: SessionRecord): PgMergeable<SessionRecord, boolean> {
  return {
    key: 'session-insert',
    row: session.id,
    input: session,
    build: (sessions) => ({
      text: `INSERT INTO sessions (${sessionColumns.join(', ')})
        SELECT * FROM unnest(${sessionColumns.map((column, index) => `$${index + 1}::${integerColumns.has(column) ? 'int' : 'text'}[]`).join(', ')})
        ON CONFLICT (id) DO NOTHING RETURNING id`,
      values: sessionColumns.map((column) => sessions.map((each) => each[column] ?? null)),
    }),
    split(rows: ReadonlyArray<{ id: string }>, sessions) {
      const inserted = new Set(rows.map((row) => row.id));
      // The same id twice in one statement: the first one got it.
      return sessions.map((each) => inserted.delete(each.id));
    },
  };
}

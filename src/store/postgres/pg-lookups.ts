import type { MessageRecord, RunRecord, SessionRecord } from '../records.ts';
import { sessionFromRow } from '../core/record-rows.ts';
import { messagesFromRows, refsPrefix, type MessageRow } from '../core/result-refs.ts';
import { runColumnList, runFromRow } from '../core/run-rows.ts';
import type { PgMergeable } from './pg-outbox.ts';

type Row = Record<string, unknown>;

/**
 * Lookups by key that the reads of one batch share: the twenty runs starting in one event-loop
 * turn read their sessions and messages with one statement each, not twenty.
 */

/** A session's row by id (`undefined` when there is none): the record and its usage come from it. */
export function sessionRowOp(id: string): PgMergeable<string, Row | undefined> {
  return {
    key: 'session-get',
    input: id,
    build: (ids) => ({ text: 'SELECT * FROM sessions WHERE id = ANY($1)', values: [[...new Set(ids)]] }),
    split(rows: readonly Row[], ids) {
      const byId = new Map(rows.map((row) => [row.id as string, row]));
      return ids.map((id) => byId.get(id));
    },
  };
}

/** A session by id, or null. */
export function sessionOp(id: string): PgMergeable<string, SessionRecord | null> {
  const op = sessionRowOp(id);
  return { ...op, split: (rows, ids) => op.split(rows, ids).map((row) => (row instanceof Error || row === undefined ? null : sessionFromRow(row))) };
}

/** A run by id, or null. */
export function runOp(id: string): PgMergeable<string, RunRecord | null> {
  return {
    key: 'run-get',
    input: id,
    build: (ids) => ({ text: `SELECT ${runColumnList} FROM runs WHERE id = ANY($1)`, values: [[...new Set(ids)]], rowMode: 'array' }),
    split(rows: readonly unknown[][], ids) {
      const byId = new Map(rows.map((row) => [row[0] as string, row]));
      // Each caller gets a record of its own.
      return ids.map((id) => {
        const row = byId.get(id);
        return row ? runFromRow(row) : null;
      });
    },
  };
}

/** The result texts that came with message rows referring to runs (`result_texts`: each run's id, a space, its result as stored). */
function resultTexts(rows: readonly Row[]): Map<string, string | null> {
  const texts = new Map<string, string | null>();
  for (const row of rows) {
    for (const entry of (row.result_texts as Array<string | null> | null) ?? []) {
      // A run without a result gives NULL: the message then cannot be read (see `MissingResultError`).
      if (entry === null) continue;
      const space = entry.indexOf(' ');
      texts.set(entry.slice(0, space), (JSON.parse(entry.slice(space + 1)) as { text?: string }).text ?? null);
    }
  }
  return texts;
}

/** A session's messages after a seq, in order. */
export function messagesOp(sessionId: string, afterSeq: number): PgMergeable<{ sessionId: string; afterSeq: number }, MessageRecord[]> {
  return {
    key: 'messages-list',
    input: { sessionId, afterSeq },
    build: (inputs) => ({
      // A lateral subquery per session, not a join: a join may scan every message of every session.
      // A content that refers to runs' results (see result-refs.ts) comes with them: the run ids
      // are read from its start as text (no JSON is parsed on the server), the results as stored.
      text: `SELECT wanted.ord, listed.* FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS wanted(session_id, after_seq, ord)
        CROSS JOIN LATERAL (SELECT messages.*, CASE WHEN starts_with(messages.content, '${refsPrefix}') THEN (SELECT array_agg(runs.id || ' ' || runs.result) FROM runs
          WHERE runs.id = ANY(string_to_array(replace(split_part(substr(messages.content, ${refsPrefix.length + 1}), ']', 1), '"', ''), ','))) END AS result_texts
          FROM messages WHERE messages.session_id = wanted.session_id AND messages.seq > wanted.after_seq ORDER BY messages.seq) listed
        ORDER BY wanted.ord, listed.seq`,
      values: [inputs.map((input) => input.sessionId), inputs.map((input) => input.afterSeq)],
    }),
    split(rows: readonly Row[], inputs) {
      const lists = inputs.map((): Row[] => []);
      for (const row of rows) lists[Number(row.ord) - 1].push(row);
      return lists.map((list) => messagesFromRows(list as unknown as MessageRow[], () => resultTexts(list)));
    },
  };
}

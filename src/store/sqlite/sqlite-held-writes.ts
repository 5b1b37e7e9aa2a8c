import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { MessageRecord, NewRunEvent, RunEventRecord } from '../records.ts';
import { createHeldRows, moveHeldPast, packEvents, type HeldEvent, type HeldMessage, type HeldRow, type HeldRows } from '../core/held-rows.ts';
import { encodeEvents } from '../core/run-fields.ts';
import { createSeqCounters, type SeqCounters } from '../core/seq-counters.ts';

/** SQLITE_CONSTRAINT_PRIMARYKEY: the (run_id, seq) or (session_id, seq) is taken. */
const primaryKeyViolation = 1555;

/** The most rows one INSERT writes (6 values each at most, far below SQLite's limit of 32,766). */
const maxRowsPerInsert = 128;

/**
 * The most characters the events of one `run_events` row take, about: a row of a WITHOUT ROWID
 * table longer than about a quarter of a page (4 KB) spills to an overflow page of its own.
 */
const maxEventRowChars = 900;

const lastMessageSeqSql = 'SELECT COALESCE(MAX(seq), 0) AS last FROM messages WHERE session_id = ?';
const lastEventSeqSql = 'SELECT COALESCE((SELECT COALESCE(last_seq, seq) FROM run_events WHERE run_id = ? ORDER BY seq DESC LIMIT 1), 0) AS last';

/** INSERT texts by row count, built once each (the same string, so its hash is kept too). */
const insertTexts = { messages: [] as string[], run_events: [] as string[] };

/** An INSERT of `count` rows into `messages` or `run_events`. */
function insertSql(table: keyof typeof insertTexts, count: number): string {
  let sql = insertTexts[table][count];
  if (sql === undefined) {
    const [columns, row] =
      table === 'messages'
        ? ['session_id, seq, role, content, created_at', '(?, ?, ?, ?, ?)']
        : ['run_id, seq, at, type, data, last_seq', '(?, ?, ?, ?, ?, ?)'];
    sql = `INSERT INTO ${table} (${columns}) VALUES ${Array.from({ length: count }, () => row).join(', ')}`;
    insertTexts[table][count] = sql;
  }
  return sql;
}

/** The appends of the SQLite store held until the commit, with their seq counters. */
export interface SqliteHeldWrites {
  readonly messages: HeldRows<HeldMessage>;
  readonly events: HeldRows<HeldEvent>;
  readonly messageSeqs: SeqCounters;
  readonly eventSeqs: SeqCounters;
  /** Holds a message appended to session `sessionId`, with the next seq; `content` is its JSON. */
  holdMessage(message: Omit<MessageRecord, 'seq' | 'content'>, content: string): number;
  /** Holds events, each taking the next seq of its run; `data` their JSON, when already encoded. */
  holdEvents(events: readonly NewRunEvent[], data?: readonly string[]): void;
  /** Writes every held message and event (inside the transaction, right before its COMMIT). */
  writeAll(): void;
  /** Forgets what is held: the transaction is lost. */
  clear(): void;
}

/**
 * The SQLite store's half of the write-behind core (see `store/core/`): appended messages and
 * events are held with their seqs from the counters and written right before the COMMIT, each
 * table with multi-row INSERTs (all of a commit's rows in one statement, or one per
 * {@link maxRowsPerInsert}), a run's events packed into rows (see `packEvents`). A seq another
 * process took meanwhile fails the statement as a whole (SQLite undoes it alone); its rows and
 * the later ones are then inserted one by one, the colliding row and the later ones of its key
 * moved past the stored ones.
 */
export function createSqliteHeldWrites(prepared: (sql: string) => StatementSync): SqliteHeldWrites {
  const messages = createHeldRows<HeldMessage>();
  const events = createHeldRows<HeldEvent>();
  const messageSeqs = createSeqCounters();
  const eventSeqs = createSeqCounters();
  const storedLast = (sql: string, key: string) => (prepared(sql).get(key) as { last: number }).last;

  /** The next seq of `key`: from its counter, else past the table and the rows still held. */
  function nextSeq(counters: SeqCounters, held: HeldRows<HeldRow>, key: string, lastSql: string): number {
    return counters.next(key, () => Math.max(storedLast(lastSql, key), held.of(key)?.at(-1)?.seq ?? 0));
  }

  function insertMessages(): void {
    if (messages.size === 0) return;
    const rows = messages.all();
    messages.clear();
    insertRows(
      rows.length,
      (index) => rows[index],
      'messages',
      (values, at, row) => {
        values[at] = row.key;
        values[at + 1] = row.seq;
        values[at + 2] = row.role;
        values[at + 3] = row.content;
        values[at + 4] = row.created_at;
      },
      (from) => insertOneByOne(rows, from, 'messages'),
    );
  }

  function insertEvents(): void {
    if (events.size === 0) return;
    const held = events.all();
    events.clear();
    const rows = packEvents(held, maxEventRowChars);
    insertRows(
      rows.length,
      (index) => rows[index],
      'run_events',
      (values, at, row) => {
        values[at] = row.run_id;
        values[at + 1] = row.seq;
        values[at + 2] = row.at;
        values[at + 3] = row.type;
        values[at + 4] = row.data;
        values[at + 5] = row.last_seq;
      },
      (from) => insertOneByOne(held, rows[from].from, 'run_events'),
    );
  }

  /** Inserts `count` rows, {@link maxRowsPerInsert} per statement; a taken seq hands over to `collided` from the failing statement's first row. */
  function insertRows<R>(
    count: number,
    rowAt: (index: number) => R,
    table: keyof typeof insertTexts,
    bind: (values: SQLInputValue[], at: number, row: R) => void,
    collided: (from: number) => void,
  ): void {
    const width = table === 'messages' ? 5 : 6;
    for (let done = 0; done < count; ) {
      const size = Math.min(maxRowsPerInsert, count - done);
      const values: SQLInputValue[] = new Array(size * width);
      for (let index = 0; index < size; index++) bind(values, index * width, rowAt(done + index));
      try {
        prepared(insertSql(table, size)).run(...values);
      } catch (error) {
        if ((error as { errcode?: number }).errcode !== primaryKeyViolation) throw error;
        collided(done);
        return;
      }
      done += size;
    }
  }

  /** Inserts held rows from `from` on, one statement each, moving a taken seq and the later ones of its key past the stored ones. */
  function insertOneByOne(rows: ReadonlyArray<HeldMessage | HeldEvent>, from: number, table: keyof typeof insertTexts): void {
    const insert = prepared(insertSql(table, 1));
    const run = (row: HeldMessage | HeldEvent) =>
      'role' in row ? insert.run(row.key, row.seq, row.role, row.content, row.created_at) : insert.run(row.key, row.seq, row.at, row.type, row.data, null);
    for (let index = from; index < rows.length; index++) {
      const row = rows[index];
      try {
        run(row);
      } catch (error) {
        if ((error as { errcode?: number }).errcode !== primaryKeyViolation) throw error;
        let end = index;
        while (end < rows.length && rows[end].key === row.key) end++;
        const last = moveHeldPast(rows.slice(index, end), storedLast(table === 'messages' ? lastMessageSeqSql : lastEventSeqSql, row.key));
        (table === 'messages' ? messageSeqs : eventSeqs).learn(row.key, last);
        run(row);
      }
    }
  }

  return {
    messages,
    events,
    messageSeqs,
    eventSeqs,

    holdMessage(message, content) {
      const seq = nextSeq(messageSeqs, messages, message.session_id, lastMessageSeqSql);
      messages.hold({ key: message.session_id, seq, role: message.role, content, created_at: message.created_at });
      return seq;
    },

    holdEvents(list, data = encodeEvents(null, list)) {
      list.forEach((event, index) => {
        event.seq = nextSeq(eventSeqs, events, event.run_id, lastEventSeqSql);
        events.hold({ key: event.run_id, seq: event.seq, at: event.at, type: event.type, data: data[index] });
      });
    },

    writeAll() {
      insertMessages();
      insertEvents();
    },

    clear() {
      messages.clear();
      events.clear();
    },
  };
}

/** A held event as a record. */
export function heldEventRecord(row: HeldEvent): RunEventRecord {
  return { run_id: row.key, seq: row.seq, at: row.at, type: row.type as RunEventRecord['type'], data: JSON.parse(row.data) as RunEventRecord['data'] };
}

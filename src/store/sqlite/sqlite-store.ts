import type { SQLInputValue } from 'node:sqlite';
import { resolve } from 'node:path';
import { startBackgroundCheckpoints } from './background-checkpoint.ts';
import { isFinished, type MessageRecord, type NewRunEvent, type RunEventRecord, type RunRecord, type SessionRecord } from '../records.ts';
import type { RunPatch, Store } from '../store.ts';
import { createGroupCommit } from './group-commit.ts';
import type { StoreFailureError } from '../store-failure-error.ts';
import { databaseFiles, openDatabase, watchDatabaseFile } from './open-database.ts';
import { runQuerySql } from './run-query-sql.ts';
import { createHeldRuns } from './held-runs.ts';
import { addRunEvents, copyRun, packedEvent, packedEventsType, messageFromRow, patchColumns, patchableRunColumns, patchableSessionColumns, runColumnList, runFromRow, runToSql, runValueToSql, sessionFromRow, type EventRow } from './rows.ts';
import { setBounded } from '../../util/bounded-map.ts';
import { createStatementCache } from './statement-cache.ts';
import { createSqliteApprovals } from './sqlite-approvals.ts';

/** Options of `createSqliteStore`. */
export interface SqliteStoreOptions {
  /** A database file (its folder is created), or `:memory:` for a private database in memory. */
  path: string;
  /**
   * How long a write waits for another process (a `cadre stop`) to release the write lock.
   * @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * The longest a transaction stays open while writes keep coming without the event loop
   * turning; a crash loses at most this much work. Writes do not wait for their commit.
   * @default 20
   */
  maxBatchMs?: number;
  /**
   * Only reads will be made: a database this process cannot write is opened read-only instead of
   * refused (see `OpenDatabaseOptions.readOnly`).
   * @default false
   */
  readOnly?: boolean | undefined;
  /** Told about a database opened with a limitation (read-only and immutable). @default none */
  onWarning?: ((message: string) => void) | undefined;
  /**
   * Checkpoints (the copies of committed pages from the `-wal` file into the database file, and
   * their fsyncs) are made mostly by a worker thread with its own connection once the `-wal` file
   * passes 4 MiB, instead of inside commits on this thread (see `startBackgroundCheckpoints`).
   * @default true
   */
  backgroundCheckpoints?: boolean;
}

type Row = Record<string, unknown>;

const activeStatuses = ['queued', 'running'] as const;

/** Sessions kept from one transaction to the next, at most. */
const knownSessionsLimit = 4096;

/** Sessions and runs whose last seq is kept in memory, each. */
export const seqCacheSize = 20_000;

/** SQLITE_CONSTRAINT_PRIMARYKEY: the (run_id, seq) or (session_id, seq) is taken. */
const primaryKeyViolation = 1555;

/** A message or event row kept back until the commit, as bound: key, seq, then the other columns. */
type HeldRow = [key: string, seq: number, second: string, third: string, fourth: string];

/** The tables whose rows are held until the commit, with the columns their INSERT binds. */
const heldColumns = {
  messages: 'session_id, seq, role, content, created_at',
  // A row holds one event, or several of a run's (see `eventRows`).
  run_events: 'run_id, seq, at, type, data, last_seq',
} as const;
type HeldTable = keyof typeof heldColumns;
const columnCounts: Record<HeldTable, number> = { messages: 5, run_events: 6 };

/** The most rows one INSERT writes (6 values each at most, far below SQLite's limit of 32,766). */
const maxRowsPerInsert = 128;

/** INSERT texts by table and row count, built once each (the same string, so its hash is kept too). */
const multiRowInsertTexts: Record<HeldTable, string[]> = { messages: [], run_events: [] };

/** An INSERT of `count` rows into a held table. */
function multiRowInsertSql(table: HeldTable, count: number): string {
  let sql = multiRowInsertTexts[table][count];
  if (sql === undefined) {
    const row = `(${Array.from({ length: columnCounts[table] }, () => '?').join(', ')})`;
    sql = `INSERT INTO ${table} (${heldColumns[table]}) VALUES ${Array.from({ length: count }, () => row).join(', ')}`;
    multiRowInsertTexts[table][count] = sql;
  }
  return sql;
}
/**
 * The most characters the events of one `run_events` row take, about: a row of a WITHOUT ROWID
 * table longer than about a quarter of a page (4 KB) spills to an overflow page of its own.
 */
const maxEventRowChars = 900;
const lastMessageSeqSql = 'SELECT COALESCE(MAX(seq), 0) AS last FROM messages WHERE session_id = ?';
const lastEventSeqSql = 'SELECT COALESCE((SELECT COALESCE(last_seq, seq) FROM run_events WHERE run_id = ? ORDER BY seq DESC LIMIT 1), 0) AS last';
/** A run's rows from the one holding the event after `afterSeq` on (the rows before it hold none after it). */
const runEventRowsSql =
  'SELECT seq, at, type, data, last_seq FROM run_events WHERE run_id = ?1 AND seq >= COALESCE((SELECT seq FROM run_events WHERE run_id = ?1 AND seq <= ?2 + 1 ORDER BY seq DESC LIMIT 1), 0) ORDER BY seq LIMIT ?3';

/**
 * The embedded store: one SQLite file in WAL mode, written with group commit and asynchronous
 * acknowledgement (see `createGroupCommit`): reads see this process's writes at once, writes
 * resolve without waiting for their commit, and `flush()` waits for it. Appended messages and
 * events, and changed runs (see `createHeldRuns`), are kept in memory and written right before
 * the COMMIT, many at a time; reads merge them in.
 *
 * @example
 * const store = createSqliteStore({ path: './.cadre/cadre.db' });
 */
export function createSqliteStore({ path, busyTimeoutMs = 5000, maxBatchMs = 20, readOnly, onWarning, backgroundCheckpoints = true }: SqliteStoreOptions): Store {
  const database = openDatabase(path, busyTimeoutMs, { readOnly, onWarning });
  // A file's checkpoints (copies of committed pages into it, and their fsyncs) leave this thread.
  const checkpoints = !backgroundCheckpoints || path === ':memory:' || path === '' || readOnly ? undefined : startBackgroundCheckpoints(resolve(path), { onError: (error) => onWarning?.(`Checkpoints of ${path} are all made by commits again: their worker thread failed (${error instanceof Error ? error.message : String(error)}).`) });
  const prepared = createStatementCache(database);
  // The last seq used per session and per run, read from the table on first use or once
  // forgotten (both are bounded). Normally only this process appends to its runs and sessions;
  // a collision makes it read the table again.
  const lastMessageSeq = new Map<string, number>();
  const lastEventSeq = new Map<string, number>();
  // Written with the next commit, in order: messages by session, events by run. Changed runs
  // are held too (see createHeldRuns), so a run gets one INSERT or UPDATE per commit.
  const heldMessages = new Map<string, HeldRow[]>();
  const heldEvents = new Map<string, HeldRow[]>();
  const heldRuns = createHeldRuns({ prepared, sqlText, knownIsCurrent });
  // PRAGMA data_version changes when another connection (another process, or another store on
  // this file) commits: until it does, the runs this process wrote are as it wrote them.
  const dataVersion = database.prepare('PRAGMA data_version');
  let seenDataVersion = -1;
  // What `externalVersion` last read, answered once the store is closed.
  let lastExternalVersion = -1;
  // Sessions as this process wrote or read them, kept like the known runs (see knownIsCurrent):
  // a run's setup reads its parent and child sessions, which this process just created.
  const knownSessions = new Map<string, SessionRecord>();
  // Each commit first checks that the file is still the one opened (not deleted, not replaced).
  const checkDatabaseFile = watchDatabaseFile(path);
  const failureListeners = new Set<(failure: StoreFailureError) => void>();
  const commits = createGroupCommit(database, {
    maxBatchMs,
    path,
    afterBegin() {
      checkDataVersion();
    },
    beforeCommit() {
      checkDatabaseFile();
      writeHeld();
    },
    onFailure(failure) {
      for (const listener of failureListeners) listener(failure);
    },
    onUndo() {
      lastMessageSeq.clear();
      lastEventSeq.clear();
    },
    onRollback() {
      knownSessions.clear();
      heldMessages.clear();
      heldEvents.clear();
      heldRuns.clear();
    },
  });
  let closed = false;

  /**
   * Whether the runs kept from earlier transactions are still as stored: inside a transaction,
   * checked when it began (it holds the write lock since), else now. Forgets them when not.
   */
  function knownIsCurrent(): boolean {
    return (database.isTransaction && seenDataVersion !== -1) || checkDataVersion();
  }

  /** Reads the data version now; forgets the known runs and says false when it moved. */
  function checkDataVersion(): boolean {
    const version = (dataVersion.get() as { data_version: number }).data_version;
    if (version === seenDataVersion) return true;
    seenDataVersion = version;
    heldRuns.forgetKnown();
    knownSessions.clear();
    // Another connection may have appended to a session or run of ours: their next seqs are read
    // again (a row of several events could otherwise overlap seqs it took without colliding).
    lastMessageSeq.clear();
    lastEventSeq.clear();
    return false;
  }

  function ensureOpen(): void {
    if (closed) throw new Error(`The store ${path} is closed.`);
  }

  /**
   * The next seq of `key` (a session's messages, a run's events): from the counter, else from
   * the table and the rows still held, whichever is further.
   */
  function nextSeq(cache: Map<string, number>, held: Map<string, HeldRow[]>, key: string, maxSql: string): number {
    let last = cache.get(key);
    if (last === undefined) last = Math.max((prepared(maxSql).get(key) as { last: number }).last, held.get(key)?.at(-1)?.[1] ?? 0);
    setBounded(cache, key, last + 1, seqCacheSize);
    return last + 1;
  }

  function hold(held: Map<string, HeldRow[]>, row: HeldRow): void {
    const rows = held.get(row[0]);
    if (rows) rows.push(row);
    else held.set(row[0], [row]);
  }

  /**
   * Keeps events for the next commit; each gets its seq now. All are encoded before any is held,
   * so an event that cannot be holds none of them.
   */
  function holdEvents(events: readonly NewRunEvent[]): void {
    const data = events.map((event) => JSON.stringify(event.data ?? {}));
    events.forEach((event, index) => {
      event.seq = nextSeq(lastEventSeq, heldEvents, event.run_id, lastEventSeqSql);
      hold(heldEvents, [event.run_id, event.seq, event.at, event.type, data[index]]);
    });
  }

  /**
   * Inserts held rows, in seq order per key, with multi-row INSERTs: all of a commit's rows of a
   * table in one statement, or one per {@link maxRowsPerInsert} rows of a larger commit. A run's
   * events held for the commit go in one row (see `bindRow`), or several of at most about
   * {@link maxEventRowChars} characters each. A seq another process took
   * meanwhile (it appended to the same session or run) fails the statement as a whole (SQLite
   * undoes it alone); its rows and the later ones are then inserted one by one, and the colliding
   * row and the later ones of its key move past the stored ones.
   */
  function insertHeld(held: Map<string, HeldRow[]>, cache: Map<string, number>, table: HeldTable, maxSql: string): void {
    if (held.size === 0) return;
    const batched = table === 'run_events';
    // Every held row in order, and where each row of the INSERT starts among them (then the end).
    const rows: HeldRow[] = [];
    const starts: number[] = [];
    for (const list of held.values()) {
      // A run's events share a row while it stays small enough to be kept in its b-tree page.
      let size = maxEventRowChars;
      for (const row of list) {
        const rowSize = batched ? row[2].length + row[3].length + row[4].length + 8 : 0;
        if (!batched || size + rowSize > maxEventRowChars) {
          starts.push(rows.length);
          size = 0;
        }
        size += rowSize;
        rows.push(row);
      }
    }
    held.clear();
    starts.push(rows.length);
    const width = columnCounts[table];
    const total = starts.length - 1;
    let done = 0;
    while (done < total) {
      const count = Math.min(maxRowsPerInsert, total - done);
      const values: SQLInputValue[] = new Array(count * width);
      for (let index = 0; index < count; index++) bindRow(values, index * width, rows, starts[done + index], starts[done + index + 1], batched);
      try {
        prepared(multiRowInsertSql(table, count)).run(...values);
      } catch (error) {
        if ((error as { errcode?: number }).errcode !== primaryKeyViolation) throw error;
        insertOneByOne(rows, starts[done], cache, table, maxSql);
        return;
      }
      done += count;
    }
  }

  /**
   * Binds held rows `from`..`to` (one key's) as one row of the INSERT at `values[at]`: a message,
   * or a run's events. Several events of a run become one row whose `seq` is the first one's,
   * `last_seq` the last one's, and `data` the events as a JSON array of [at, type, data] arrays,
   * built from their JSON as held (each encoded once); a single event is a row as before.
   */
  function bindRow(values: SQLInputValue[], at: number, rows: readonly HeldRow[], from: number, to: number, batched: boolean): void {
    const first = rows[from];
    values[at] = first[0];
    values[at + 1] = first[1];
    values[at + 2] = first[2];
    if (!batched || to - from === 1) {
      values[at + 3] = first[3];
      values[at + 4] = first[4];
      if (batched) values[at + 5] = null;
      return;
    }
    let data = '[';
    for (let index = from; index < to; index++) {
      const row = rows[index];
      // The events of a row take consecutive seqs: nextSeq gives a run's held events one after another.
      if (row[1] !== first[1] + index - from) throw new Error(`The held events of run ${first[0]} do not follow each other (${row[1]} after ${first[1]}).`);
      data += `${index === from ? '' : ','}${packedEvent(row[2], row[3], row[4])}`;
    }
    values[at + 3] = packedEventsType;
    values[at + 4] = `${data}]`;
    values[at + 5] = rows[to - 1][1];
  }

  /** Inserts `rows` from `from` on one statement each, moving a taken seq and the later ones of its key past the stored ones. */
  function insertOneByOne(rows: HeldRow[], from: number, cache: Map<string, number>, table: HeldTable, maxSql: string): void {
    const insert = prepared(multiRowInsertSql(table, 1));
    const batched = table === 'run_events';
    const run = (row: HeldRow) => (batched ? insert.run(row[0], row[1], row[2], row[3], row[4], null) : insert.run(row[0], row[1], row[2], row[3], row[4]));
    for (let index = from; index < rows.length; index++) {
      const row = rows[index];
      try {
        run(row);
      } catch (error) {
        if ((error as { errcode?: number }).errcode !== primaryKeyViolation) throw error;
        let last = (prepared(maxSql).get(row[0]) as { last: number }).last;
        for (let later = index; later < rows.length && rows[later][0] === row[0]; later++) rows[later][1] = ++last;
        setBounded(cache, row[0], last, seqCacheSize);
        run(row);
      }
    }
  }

  /** Writes everything held; runs inside the transaction, right before its COMMIT. */
  function writeHeld(): void {
    heldRuns.writeAll();
    insertHeld(heldMessages, lastMessageSeq, 'messages', lastMessageSeqSql);
    insertHeld(heldEvents, lastEventSeq, 'run_events', lastEventSeqSql);
  }

  /** Held rows of `key` after `afterSeq`, as records. */
  function heldAfter<T>(held: Map<string, HeldRow[]>, key: string, afterSeq: number, toRecord: (row: HeldRow) => T): T[] {
    const rows = held.get(key);
    if (rows === undefined) return [];
    const records: T[] = [];
    for (const row of rows) if (row[1] > afterSeq) records.push(toRecord(row));
    return records;
  }

  /**
   * The fields a change to run `id` sets, encoded as SQLite stores them. Checks that the patch
   * leaves the status alone, that every field can be stored, and that every event belongs to the
   * run; a bad call is rejected before anything is held.
   */
  function runFields(id: string, patch: RunPatch, events: readonly NewRunEvent[]): Array<{ column: string; value: unknown; sql: SQLInputValue }> {
    for (const event of events) if (event.run_id !== id) throw mismatchedEvent(id, event);
    if ((patch as { status?: unknown }).status !== undefined) {
      throw new TypeError("A run patch cannot change 'status': use transitionRun, which checks the move and writes its event.");
    }
    return patchColumns(patch, patchableRunColumns, 'A run patch').map((column) => {
      const value = patch[column as keyof RunPatch];
      return { column, value, sql: runValueToSql(column, value) };
    });
  }

  /**
   * A write that changes run `id`: the patch and events are checked and encoded first (a bad
   * call is rejected without anything held), then `work` runs with the encoded fields.
   */
  function writeRunChange<T>(
    id: string,
    patch: RunPatch,
    events: readonly NewRunEvent[],
    work: (fields: ReturnType<typeof runFields>) => T,
  ): Promise<T> {
    let fields: ReturnType<typeof runFields>;
    try {
      fields = runFields(id, patch, events);
    } catch (error) {
      return Promise.reject(error);
    }
    return write(() => work(fields));
  }

  /** Whether run `id` exists, cheaply for a run this process already wrote to. */
  function runExists(id: string): boolean {
    return heldRuns.has(id) || lastEventSeq.has(id) || heldRuns.knows(id) || prepared('SELECT 1 AS found FROM runs WHERE id = ?').get(id) !== undefined;
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

  /** The run a statement returns (RETURNING the `runColumnList`), or null. */
  function runReturnedBy(sql: string, ...parameters: SQLInputValue[]): RunRecord | null {
    const row = prepared(sql, { returnArrays: true }).get(...parameters) as unknown[] | undefined;
    return row ? runFromRow(row) : null;
  }

  function write<T>(work: () => T): Promise<T> {
    if (closed) return Promise.reject(new Error(`The store ${path} is closed.`));
    return commits.write(work);
  }

  return {
    description: `sqlite:${path}`,
    files: databaseFiles(path),

    ...createSqliteApprovals({ prepared, write, ensureOpen }),

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
        setBounded(knownSessions, session.id, sessionRecord(session), knownSessionsLimit);
        // A new session has no messages yet: its first one needs no MAX(seq) query.
        setBounded(lastMessageSeq, session.id, 0, seqCacheSize);
      });
    },

    async getSession(id) {
      ensureOpen();
      const known = knownSessions.get(id);
      if (known !== undefined && knownIsCurrent()) return { ...known };
      const row = prepared('SELECT * FROM sessions WHERE id = ?').get(id) as Row | undefined;
      if (row === undefined) return null;
      const session = sessionFromRow(row);
      setBounded(knownSessions, id, session, knownSessionsLimit);
      return { ...session };
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
        const known = knownSessions.get(id);
        if (known !== undefined) columns.forEach((column, index) => ((known as unknown as Record<string, unknown>)[column] = values[index]));
      });
    },

    addSessionUsage(id, usage) {
      return write(() => {
        prepared('UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ? WHERE id = ?').run(usage.input_tokens, usage.output_tokens, id);
      });
    },

    async getSessionUsage(id) {
      ensureOpen();
      const row = prepared('SELECT input_tokens, output_tokens FROM sessions WHERE id = ?').get(id) as { input_tokens: number; output_tokens: number } | undefined;
      return row ? { input_tokens: row.input_tokens, output_tokens: row.output_tokens } : null;
    },

    appendMessages(messages) {
      return write(() => {
        // Checked and encoded before any is held, so a bad message holds none of them.
        const contents = messages.map((message) => JSON.stringify(message.content ?? null));
        return messages.map((message, index) => {
          const seq = nextSeq(lastMessageSeq, heldMessages, message.session_id, lastMessageSeqSql);
          hold(heldMessages, [message.session_id, seq, message.role, contents[index], message.created_at]);
          return { session_id: message.session_id, seq, role: message.role, content: message.content, created_at: message.created_at };
        });
      });
    },

    updateMessageContent(sessionId, seq, content) {
      return write(() => {
        const encoded = JSON.stringify(content ?? null);
        const held = heldMessages.get(sessionId)?.find((row) => row[1] === seq);
        if (held) held[3] = encoded;
        else prepared('UPDATE messages SET content = ? WHERE session_id = ? AND seq = ?').run(encoded, sessionId, seq);
      });
    },

    async listMessages(sessionId, { afterSeq = 0 } = {}) {
      ensureOpen();
      const rows = prepared('SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq').all(sessionId, afterSeq);
      const stored = rows.map((row) => messageFromRow(row as Row));
      // Held messages always come after the stored ones: every message of this process is held first.
      return stored.concat(heldAfter(heldMessages, sessionId, afterSeq, heldMessageRecord));
    },

    commitMessage({ session_id: sessionId, seq, role, content, created_at: createdAt, runs }) {
      let encoded: string;
      try {
        encoded = JSON.stringify(content ?? null);
      } catch (error) {
        return Promise.reject(error);
      }
      return write(() => {
        const refused = runs.filter((change) => {
          const current = heldRuns.load(change.id);
          return current === null || !change.check(copyRun(current));
        }).map((change) => change.id);
        if (refused.length > 0) return { message: null, runs: [], refused };
        const fields = runs.map((change) => runFields(change.id, change.patch, []));
        let message: MessageRecord;
        if (seq === undefined) {
          const next = nextSeq(lastMessageSeq, heldMessages, sessionId, lastMessageSeqSql);
          hold(heldMessages, [sessionId, next, role, encoded, createdAt]);
          message = { session_id: sessionId, seq: next, role, content, created_at: createdAt };
        } else {
          const held = heldMessages.get(sessionId)?.find((row) => row[1] === seq);
          let stored: { role: string; created_at: string };
          if (held) {
            held[3] = encoded;
            stored = { role: held[2], created_at: held[4] };
          } else {
            const row = prepared('UPDATE messages SET content = ? WHERE session_id = ? AND seq = ? RETURNING role, created_at').get(encoded, sessionId, seq) as Row | undefined;
            if (row === undefined) throw new Error(`No message ${seq} in session '${sessionId}' to rewrite.`);
            stored = { role: row.role as string, created_at: row.created_at as string };
          }
          message = { session_id: sessionId, seq, role: stored.role as MessageRecord['role'], content, created_at: stored.created_at };
        }
        const changed = runs.map((change, index) => {
          const events = change.events(message);
          for (const event of events) if (event.run_id !== change.id) throw mismatchedEvent(change.id, event);
          holdEvents(events);
          heldRuns.change(change.id, fields[index]);
          return { run: copyRun(heldRuns.load(change.id)!), events: events as RunEventRecord[] };
        });
        return { message, runs: changed, refused };
      });
    },

    insertRun(run, event) {
      if (event.run_id !== run.id) return Promise.reject(mismatchedEvent(run.id, event));
      try {
        // Encoded here only to refuse a run that cannot be stored; the commit encodes the record as it is then.
        runToSql(run);
      } catch (error) {
        return Promise.reject(error);
      }
      return write(() => {
        if (runExists(run.id)) throw new Error(`A run with id '${run.id}' is already stored.`);
        // A new run has no events yet: its first needs no MAX(seq) query.
        if (!heldEvents.has(run.id)) setBounded(lastEventSeq, run.id, 0, seqCacheSize);
        holdEvents([event]);
        heldRuns.insert(run);
      });
    },

    transitionRun({ id, from, to, patch = {}, patchFor, event }) {
      // A finished status never changes, whatever the caller allows.
      const allowed = from.filter((status) => !isFinished(status));
      return writeRunChange(id, patch, [event], (fields) => {
        const current = heldRuns.load(id);
        if (current === null || !allowed.includes(current.status)) return null;
        // Checked and encoded before anything is held, like `patch`.
        const more = patchFor ? runFields(id, patchFor(copyRun(current)), []) : [];
        holdEvents([event]);
        heldRuns.change(id, [{ column: 'status', value: to, sql: to }, ...fields, ...more]);
        // `current` is the held record, which the change updated.
        return copyRun(current);
      });
    },

    updateRun(id, patch, events = []) {
      return writeRunChange(id, patch, events, (fields) => {
        const current = heldRuns.load(id);
        if (current === null) return null;
        holdEvents(events);
        if (fields.length > 0) heldRuns.change(id, fields);
        return copyRun(current);
      });
    },

    patchRun(id, patch, events = []) {
      // Written with the commit and never read back here: the fields wait blind if the run was not read.
      return writeRunChange(id, patch, events, (fields) => {
        if (!runExists(id)) return false;
        holdEvents(events);
        if (fields.length > 0) heldRuns.change(id, fields);
        return true;
      });
    },

    appendRunEvents(events) {
      return write(() => holdEvents(events));
    },

    async getRun(id) {
      ensureOpen();
      return heldRuns.read(id);
    },

    async listRuns(query) {
      ensureOpen();
      // The filters and the order may depend on held fields, so held runs are written first.
      heldRuns.writeAll();
      const { sql, parameters } = runQuerySql(query);
      const rows = prepared(sql, { returnArrays: true }).all(...parameters) as unknown as unknown[][];
      return rows.map((row) => runFromRow(row));
    },

    async listRunEvents(runId, { afterSeq = 0, limit } = {}) {
      ensureOpen();
      const max = limit === undefined ? -1 : Math.max(0, Math.floor(limit));
      // Rows may hold several events each: the one holding the event after `afterSeq` comes first.
      const rows = prepared(runEventRowsSql, { returnArrays: true }).all(runId, afterSeq, max === -1 ? -1 : max + 1) as unknown as EventRow[];
      const stored: RunEventRecord[] = [];
      for (const row of rows) addRunEvents(stored, runId, row, afterSeq);
      if (max !== -1 && stored.length > max) stored.length = max;
      const held = heldAfter(heldEvents, runId, afterSeq, heldEventRecord);
      if (held.length === 0) return stored;
      // Held events follow the stored ones, unless another process appended to this run since
      // its seq was taken: then they share a seq until the commit moves the held ones past.
      const merged = stored.concat(held).sort((a, b) => a.seq - b.seq);
      return max === -1 ? merged : merged.slice(0, max);
    },

    renewLeases(owner, expiresAt) {
      return write(() => {
        heldRuns.writeAll();
        // Changed in SQL, not through the held runs.
        heldRuns.forgetKnown();
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
        heldRuns.write(id);
        heldRuns.forgetKnown(id);
        const run = runReturnedBy(
          `UPDATE runs SET lease_owner = ?, lease_expires_at = ? WHERE id = ? AND status IN (?, ?) AND (lease_expires_at IS NULL OR lease_expires_at < ?) RETURNING ${runColumnList}`,
          owner,
          expiresAt,
          id,
          ...activeStatuses,
          expiredBefore,
        );
        // The previous owner was another process that may have appended events.
        if (run && !heldEvents.has(id)) lastEventSeq.delete(id);
        return run;
      });
    },

    flush() {
      if (closed) return Promise.resolve();
      return commits.flush();
    },

    onFailure(listener) {
      failureListeners.add(listener);
      return () => void failureListeners.delete(listener);
    },

    externalVersion() {
      // Read apart from `seenDataVersion`, which says what the caches were last checked against.
      if (!closed) lastExternalVersion = (dataVersion.get() as { data_version: number }).data_version;
      return lastExternalVersion;
    },

    async close() {
      if (closed) return;
      closed = true;
      // The commit runs synchronously inside flush, so the connection can close right after.
      const flushed = commits.flush();
      commits.release();
      // The worker's connection closes first, so this one, the last, checkpoints and removes the WAL.
      await checkpoints?.stop();
      database.close();
      await flushed;
    },
  };
}

/** A session as `sessionFromRow` reads it back, from the record it was created with. */
function sessionRecord(session: SessionRecord): SessionRecord {
  return {
    id: session.id,
    agent: session.agent,
    model: session.model,
    created_at: session.created_at,
    status: session.status,
    parent_run_id: session.parent_run_id,
    auto_resumes: session.auto_resumes,
    user_canceled_at: session.user_canceled_at,
  };
}

function heldMessageRecord(row: HeldRow): MessageRecord {
  return { session_id: row[0], seq: row[1], role: row[2] as MessageRecord['role'], content: JSON.parse(row[3]), created_at: row[4] };
}

function heldEventRecord(row: HeldRow): RunEventRecord {
  return { run_id: row[0], seq: row[1], at: row[2], type: row[3] as RunEventRecord['type'], data: JSON.parse(row[4]) as RunEventRecord['data'] };
}

function mismatchedEvent(runId: string, event: NewRunEvent): TypeError {
  return new TypeError(`An event of run '${event.run_id}' was passed with run '${runId}'.`);
}

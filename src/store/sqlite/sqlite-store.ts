import type { SQLInputValue } from 'node:sqlite';
import { resolve } from 'node:path';
import { startBackgroundCheckpoints } from './background-checkpoint.ts';
import { isFinished, type NewRunEvent, type RunEventRecord, type RunRecord } from '../records.ts';
import type { RunPatch, Store } from '../store.ts';
import { createGroupCommit } from './group-commit.ts';
import type { StoreFailureError } from '../store-failure-error.ts';
import { databaseFiles, openDatabase, watchDatabaseFile } from './open-database.ts';
import type { NowMs, Random } from '../../util/clock.ts';
import { runQuerySql } from './run-query-sql.ts';
import { createHeldRuns } from './held-runs.ts';
import { addRunEvents, type EventRow } from '../core/event-rows.ts';
import { checkRunChange, mismatchedEvent, runFields, whenValid, type RunField } from '../core/run-fields.ts';
import { copyRun, runColumnList, runFromRow, runToSql } from '../core/run-rows.ts';
import { createStatementCache } from './statement-cache.ts';
import { createSqliteApprovals } from './sqlite-approvals.ts';
import { createSqliteWorkflows } from './sqlite-workflows.ts';
import { createSqliteHeldWrites, heldEventRecord } from './sqlite-held-writes.ts';
import { createSqliteMessages } from './sqlite-messages.ts';
import { createSqliteSessions } from './sqlite-sessions.ts';
import { createAnswerIndex, referToAnswer } from '../core/result-refs.ts';

export { seqCacheSize } from '../core/seq-counters.ts';

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
  /** The clock in epoch milliseconds an upgrade's wait for another process is timed on (see `OpenDatabaseOptions.nowMs`). @default systemNowMs */
  nowMs?: NowMs | undefined;
  /** Random numbers for the pauses of that wait. @default systemRandom */
  random?: Random | undefined;
}

const activeStatuses = ['queued', 'running'] as const;

/** A run's rows from the one holding the event after `afterSeq` on (the rows before it hold none after it). */
const runEventRowsSql =
  'SELECT seq, at, type, data, last_seq FROM run_events WHERE run_id = ?1 AND seq >= COALESCE((SELECT seq FROM run_events WHERE run_id = ?1 AND seq <= ?2 + 1 ORDER BY seq DESC LIMIT 1), 0) ORDER BY seq LIMIT ?3';

/**
 * The embedded store: one SQLite file in WAL mode, written with group commit and asynchronous
 * acknowledgement (see `createGroupCommit`): reads see this process's writes at once, writes
 * resolve without waiting for their commit, and `flush()` waits for it. Appended messages and
 * events (see `createSqliteHeldWrites`), and changed runs (see `createHeldRuns`), are kept in
 * memory and written right before the COMMIT, many at a time; reads merge them in. The
 * write-behind core (held rows, seq counters, known runs, the row codec) is the one the Postgres
 * store uses too (`store/core/`); this file keeps the connection, the commit and the SQL.
 *
 * @example
 * const store = createSqliteStore({ path: './.cadre/cadre.db' });
 */
export function createSqliteStore({
  path,
  busyTimeoutMs = 5000,
  maxBatchMs = 20,
  readOnly,
  onWarning,
  backgroundCheckpoints = true,
  nowMs,
  random,
}: SqliteStoreOptions): Store {
  const database = openDatabase(path, busyTimeoutMs, { readOnly, onWarning, nowMs, random });
  // A file's checkpoints (copies of committed pages into it, and their fsyncs) leave this thread.
  const checkpoints =
    !backgroundCheckpoints || path === ':memory:' || path === '' || readOnly
      ? undefined
      : startBackgroundCheckpoints(resolve(path), {
          onError: (error) =>
            onWarning?.(
              `Checkpoints of ${path} are all made by commits again: their worker thread failed (${error instanceof Error ? error.message : String(error)}).`,
            ),
        });
  const prepared = createStatementCache(database);
  // Messages by session and events by run, written with the next commit in order, with the last
  // seq used per session and per run (read from the table on first use or once forgotten).
  // Normally only this process appends to its runs and sessions; a collision makes it read the
  // table again. Changed runs are held too, so a run gets one INSERT or UPDATE per commit.
  const held = createSqliteHeldWrites(prepared);
  const heldRuns = createHeldRuns({ prepared, sqlText, knownIsCurrent });
  // A finished run's answer is stored once, in its result: messages that repeat it refer to it.
  const answers = createAnswerIndex();
  const sessions = createSqliteSessions({ prepared, write, ensureOpen, knownIsCurrent, messageSeqs: held.messageSeqs });
  // PRAGMA data_version changes when another connection (another process, or another store on
  // this file) commits: until it does, the runs this process wrote are as it wrote them.
  const dataVersion = database.prepare('PRAGMA data_version');
  let seenDataVersion = -1;
  // What `externalVersion` last read, answered once the store is closed.
  let lastExternalVersion = -1;
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
      heldRuns.writeAll();
      held.writeAll();
    },
    onFailure(failure) {
      for (const listener of failureListeners) listener(failure);
    },
    onUndo() {
      held.messageSeqs.clear();
      held.eventSeqs.clear();
    },
    onRollback() {
      sessions.forget();
      held.clear();
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
    sessions.forget();
    // Another connection may have appended to a session or run of ours: their next seqs are read
    // again (a row of several events could otherwise overlap seqs it took without colliding).
    held.messageSeqs.clear();
    held.eventSeqs.clear();
    return false;
  }

  function ensureOpen(): void {
    if (closed) throw new Error(`The store ${path} is closed.`);
  }

  /**
   * A write that changes run `id`: the patch and events are checked and encoded first (a bad
   * call is rejected without anything held), then `work` runs with the encoded fields.
   */
  function writeRunChange<T>(id: string, patch: RunPatch, events: readonly NewRunEvent[], work: (fields: RunField[], data: string[]) => T): Promise<T> {
    return whenValid(
      () => checkRunChange(id, patch, events),
      ({ fields, data }) => write(() => work(fields, data)),
    );
  }

  /**
   * A run that just finished with a result, in the open transaction: its answer is remembered for
   * the parent's messages, and the last assistant message of its own session, when it is held for
   * this same commit and holds the answer whole, is stored referring to the result instead (the
   * two are committed together, so the reference never outlives a lost result).
   */
  function referToResult(run: RunRecord): void {
    answers.note(run);
    const rows = held.messages.of(run.child_session_id);
    if (rows === undefined || run.result === null) return;
    for (let index = rows.length - 1; index >= 0; index--) {
      const row = rows[index];
      if (row.role !== 'assistant') continue;
      const stored = referToAnswer(row.content, { runId: run.id, text: run.result.text });
      if (stored !== null) row.content = stored;
      return;
    }
  }

  /** Whether run `id` exists, cheaply for a run this process already wrote to. */
  function runExists(id: string): boolean {
    return heldRuns.has(id) || held.eventSeqs.has(id) || heldRuns.knows(id) || prepared('SELECT 1 AS found FROM runs WHERE id = ?').get(id) !== undefined;
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
    ...createSqliteWorkflows({ prepared, write, ensureOpen }),
    ...sessions.methods,
    ...createSqliteMessages({ prepared, write, ensureOpen, held, heldRuns, answers }),

    insertRun(run, event) {
      if (event.run_id !== run.id) return Promise.reject(mismatchedEvent(run.id, event));
      // Encoded here only to refuse a run that cannot be stored; the commit encodes the record as it is then.
      return whenValid(
        () => (runToSql(run), checkRunChange(run.id, {}, [event]).data),
        (data) =>
          write(() => {
            if (runExists(run.id)) throw new Error(`A run with id '${run.id}' is already stored.`);
            // A new run has no events yet: its first needs no MAX(seq) query.
            if (held.events.of(run.id) === undefined) held.eventSeqs.learn(run.id, 0);
            held.holdEvents([event], data);
            heldRuns.insert(run);
            answers.note(run);
          }),
      );
    },

    transitionRun({ id, from, to, patch = {}, patchFor, check, event }) {
      // A finished status never changes, whatever the caller allows.
      const allowed = from.filter((status) => !isFinished(status));
      return writeRunChange(id, patch, [event], (fields, data) => {
        const current = heldRuns.load(id);
        if (current === null || !allowed.includes(current.status)) return null;
        if (check && !check(copyRun(current))) return null;
        // Checked and encoded before anything is held, like `patch`.
        const more = patchFor ? runFields(patchFor(copyRun(current))) : [];
        held.holdEvents([event], data);
        heldRuns.change(id, [{ field: 'status', column: 'status', value: to, stored: to }, ...fields, ...more]);
        // `current` is the held record, which the change updated.
        if (isFinished(to) && current.result !== null) referToResult(current);
        return copyRun(current);
      });
    },

    updateRun(id, patch, events = []) {
      return writeRunChange(id, patch, events, (fields, data) => {
        const current = heldRuns.load(id);
        if (current === null) return null;
        held.holdEvents(events, data);
        if (fields.length > 0) heldRuns.change(id, fields);
        answers.note(current);
        return copyRun(current);
      });
    },

    patchRun(id, patch, events = []) {
      // Written with the commit and never read back here: the fields wait blind if the run was not read.
      return writeRunChange(id, patch, events, (fields, data) => {
        if (!runExists(id)) return false;
        held.holdEvents(events, data);
        if (fields.length > 0) heldRuns.change(id, fields);
        return true;
      });
    },

    appendRunEvents(events) {
      return write(() => held.holdEvents(events));
    },

    async getRun(id) {
      ensureOpen();
      const run = heldRuns.read(id);
      // A run another process ended: the messages this one writes next may refer to its answer.
      if (run !== null && run.result !== null) answers.note(run);
      return run;
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
      const heldEvents = held.events.after(runId, afterSeq);
      if (heldEvents.length === 0) return stored;
      // Held events follow the stored ones, unless another process appended to this run since
      // its seq was taken: then they share a seq until the commit moves the held ones past.
      const merged = stored.concat(heldEvents.map(heldEventRecord)).sort((a, b) => a.seq - b.seq);
      return max === -1 ? merged : merged.slice(0, max);
    },

    renewLeases(owner, expiresAt) {
      return write(() => {
        heldRuns.writeAll();
        // Changed in SQL, not through the held runs.
        heldRuns.forgetKnown();
        const result = prepared('UPDATE runs SET lease_expires_at = ? WHERE lease_owner = ? AND status IN (?, ?)').run(expiresAt, owner, ...activeStatuses);
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
        if (run && held.events.of(id) === undefined) held.eventSeqs.forget(id);
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

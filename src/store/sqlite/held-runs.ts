import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { RunRecord } from '../records.ts';
import { setBounded } from '../../util/bounded-map.ts';
import { copyRun, copyRunValue, runColumnList, runColumns, runFromRow, runSqlColumn, runToSql, setRunField } from './rows.ts';

/** A run changed in the open transaction: written once, right before its COMMIT. */
interface HeldRun {
  /** The whole run as it is now, once read or inserted in this transaction; null while only its changed fields are known. */
  record: RunRecord | null;
  /** The changed columns with their values, as given (laid over a read) and as SQLite stores them. */
  changed: Map<string, { value: unknown; sql: SQLInputValue }>;
  /** Not stored yet: written with an INSERT of the whole row. */
  inserted: boolean;
}

/** Runs changed in the open transaction, kept in memory and written with its commit. */
export interface HeldRuns {
  has(id: string): boolean;
  /** Whether run `id` is known from an earlier transaction of this process (so it exists), no other connection having committed since. */
  knows(id: string): boolean;
  /**
   * The run as this transaction sees it (held or stored), owned by the holder and kept until
   * the commit: later changes through `change` show in it. Null if no such run.
   */
  load(id: string): RunRecord | null;
  /** The run as this transaction sees it, as a copy the caller may keep. */
  read(id: string): RunRecord | null;
  /** Holds a new run; it is written with an INSERT. */
  insert(run: RunRecord): void;
  /**
   * Holds changed fields of run `id`, already encoded (`sql`). A run not loaded in this
   * transaction gets them without being read (a blind change, laid over later reads).
   */
  change(id: string, fields: ReadonlyArray<{ column: string; value: unknown; sql: SQLInputValue }>): void;
  /** Writes run `id` now (inside the open transaction), if it is held. */
  write(id: string): void;
  /** Writes every held run now, so SQL that reads or changes runs sees them. */
  writeAll(): void;
  /** Forgets every held run and every run known from earlier transactions: the transaction is lost. */
  clear(): void;
  /** Forgets the runs known from earlier transactions (another connection changed the file, or SQL changed runs directly). */
  forgetKnown(id?: string): void;
}

/** Runs whose record is kept from one transaction to the next, at most. */
export const knownRunsLimit = 4096;

/**
 * What a transaction did to runs, kept in memory and written right before its COMMIT: one
 * INSERT or UPDATE per run, however many times the run changed. A run's row is read at most
 * once per transaction. Sound because the transaction holds the write lock from its first write
 * (`BEGIN IMMEDIATE`) to its COMMIT, so no other process can change a run in between: a
 * compare-and-set on the held status is as safe as one in SQL.
 */
export function createHeldRuns({
  prepared,
  sqlText,
  knownIsCurrent,
}: {
  prepared: (sql: string, options?: { returnArrays?: boolean }) => StatementSync;
  sqlText: (key: string, build: () => string) => string;
  /**
   * Whether no other connection changed the file since the runs were known (else they are
   * forgotten, by `forgetKnown`, before this returns false).
   */
  knownIsCurrent: () => boolean;
}): HeldRuns {
  const held = new Map<string, HeldRun>();
  // Runs as this process last wrote them, kept across commits while no other connection changes
  // the file (see `knownIsCurrent`): a run's next transaction then starts from its record instead
  // of reading its row back. Never handed out: callers get copies.
  const known = new Map<string, RunRecord>();
  const selectRunSql = `SELECT ${runColumnList} FROM runs WHERE id = ?`;
  const insertRunSql = `INSERT INTO runs (${runColumns.join(', ')}) VALUES (${runColumns.map(() => '?').join(', ')})`;

  /**
   * The run as committed (or written in this transaction), as a record of the caller's. With
   * `take`, a known record itself is handed over (no copy): the caller holds it until the commit,
   * which makes it the known record again.
   */
  function select(id: string, take = false): RunRecord | null {
    const record = known.get(id);
    if (record !== undefined && knownIsCurrent()) {
      if (!take) return copyRun(record);
      known.delete(id);
      return record;
    }
    const row = prepared(selectRunSql, { returnArrays: true }).get(id) as unknown[] | undefined;
    return row ? runFromRow(row) : null;
  }

  function layOver(run: RunRecord, changed: HeldRun['changed']): RunRecord {
    for (const [column, { value }] of changed) setRunField(run, column, value);
    return run;
  }

  function load(id: string): RunRecord | null {
    const entry = held.get(id);
    if (entry === undefined) {
      // Kept for the rest of the transaction, so the next change of the run reads nothing.
      const stored = select(id, true);
      if (stored !== null) held.set(id, { record: stored, changed: new Map(), inserted: false });
      return stored;
    }
    if (entry.record === null) {
      const stored = select(id, true);
      // A blind change is only held for a run known to exist.
      if (stored === null) throw new Error(`Run ${id} has held changes but is not stored.`);
      entry.record = layOver(stored, entry.changed);
    }
    return entry.record;
  }

  function write(id: string, entry: HeldRun): void {
    if (entry.inserted) {
      prepared(insertRunSql).run(...runToSql(entry.record as RunRecord));
    } else if (entry.changed.size > 0) {
      const columns = [...entry.changed.keys()].sort();
      const sql = sqlText(`held ${columns.join(' ')}`, () => `UPDATE runs SET ${columns.map((column) => `${runSqlColumn(column)} = ?`).join(', ')} WHERE id = ?`);
      prepared(sql).run(...columns.map((column) => entry.changed.get(column)?.sql ?? null), id);
    }
    // Only once written: a refused statement keeps the run held for the next try (the commit).
    held.delete(id);
    // What the row now holds, for the run's next transaction.
    if (entry.record !== null) setBounded(known, id, entry.record, knownRunsLimit);
    else {
      const record = known.get(id);
      if (record !== undefined) layOver(record, entry.changed);
    }
  }

  return {
    has: (id) => held.has(id),
    knows: (id) => known.has(id) && knownIsCurrent(),
    load,

    read(id) {
      const entry = held.get(id);
      if (entry?.record) return copyRun(entry.record);
      const stored = select(id);
      return stored && entry ? layOver(stored, entry.changed) : stored;
    },

    insert(run) {
      held.set(run.id, { record: copyRun(run), changed: new Map(), inserted: true });
    },

    change(id, fields) {
      let entry = held.get(id);
      if (entry === undefined) {
        entry = { record: null, changed: new Map(), inserted: false };
        held.set(id, entry);
      }
      for (const { column, value, sql } of fields) {
        if (entry.record) setRunField(entry.record, column, value);
        // An inserted run is written whole from its record.
        if (!entry.inserted) entry.changed.set(column, { value: copyRunValue(column, value), sql });
      }
    },

    write(id) {
      const entry = held.get(id);
      if (entry) write(id, entry);
    },

    writeAll() {
      for (const [id, entry] of held) write(id, entry);
    },

    clear() {
      held.clear();
      known.clear();
    },

    forgetKnown(id) {
      if (id === undefined) known.clear();
      else known.delete(id);
    },
  };
}

import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { RunRecord } from '../records.ts';
import { createKnownRuns } from '../core/known-runs.ts';
import type { RunField } from '../core/run-fields.ts';
import { copyRun, copyRunValue, runColumnList, runColumns, runFromRow, runToSql, setRunField, type StoredValue } from '../core/run-rows.ts';

/** A run changed in the open transaction: written once, right before its COMMIT. */
interface HeldRun {
  /** The whole run as it is now, once read or inserted in this transaction; null while only its changed fields are known. */
  record: RunRecord | null;
  /** The changed fields, as given (laid over a read) and as stored. */
  changed: Map<string, { column: string; value: unknown; stored: StoredValue }>;
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
   * Holds changed fields of run `id`, already encoded. A run not loaded in this
   * transaction gets them without being read (a blind change, laid over later reads).
   */
  change(id: string, fields: readonly RunField[]): void;
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
  const known = createKnownRuns({ limit: knownRunsLimit, keepFinished: true });
  const selectRunSql = `SELECT ${runColumnList} FROM runs WHERE id = ?`;
  const insertRunSql = `INSERT INTO runs (${runColumns.join(', ')}) VALUES (${runColumns.map(() => '?').join(', ')})`;

  /**
   * The run as committed (or written in this transaction), as a record of the caller's. With
   * `take`, a known record itself is handed over (no copy): the caller holds it until the commit,
   * which makes it the known record again.
   */
  function select(id: string, take = false): RunRecord | null {
    if (known.has(id) && knownIsCurrent()) return take ? known.take(id)! : known.get(id)!;
    const row = prepared(selectRunSql, { returnArrays: true }).get(id) as unknown[] | undefined;
    return row ? runFromRow(row) : null;
  }

  function layOver(run: RunRecord, changed: HeldRun['changed']): RunRecord {
    for (const [field, { value }] of changed) setRunField(run, field, value);
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
      const fields = [...entry.changed.keys()].sort();
      const sql = sqlText(
        `held ${fields.join(' ')}`,
        () => `UPDATE runs SET ${fields.map((field) => `${entry.changed.get(field)!.column} = ?`).join(', ')} WHERE id = ?`,
      );
      prepared(sql).run(...fields.map((field) => (entry.changed.get(field)?.stored ?? null) as SQLInputValue), id);
    }
    // Only once written: a refused statement keeps the run held for the next try (the commit).
    held.delete(id);
    // What the row now holds, for the run's next transaction.
    if (entry.record !== null) known.keep(entry.record);
    else known.update(id, (record) => layOver(record, entry.changed));
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
      for (const { field, column, value, stored } of fields) {
        if (entry.record) setRunField(entry.record, field, value);
        // An inserted run is written whole from its record.
        if (!entry.inserted) entry.changed.set(field, { column, value: copyRunValue(field, value), stored });
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
      known.forget();
    },

    forgetKnown(id) {
      known.forget(id);
    },
  };
}

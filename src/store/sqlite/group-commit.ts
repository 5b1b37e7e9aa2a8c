import type { DatabaseSync } from 'node:sqlite';

/** Writes that share one transaction and resolve together when it commits. */
export interface GroupCommit {
  /**
   * Runs `work` at once inside the shared transaction, so reads on this connection see it
   * immediately; resolves with its value after the COMMIT that contains it. With `atomic`,
   * the statements of `work` apply all together or not at all.
   */
  write<T>(work: () => T, options?: { atomic?: boolean }): Promise<T>;
  /** Commits the open transaction now. */
  flush(): Promise<void>;
}

interface Batch {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit over one SQLite connection. A COMMIT costs far more than a statement, so
 * the first write opens a transaction (`BEGIN IMMEDIATE`), every write of the same
 * event-loop turn joins it, and one COMMIT scheduled with `setImmediate` ends it. The write
 * lock is therefore never held past one turn, and other processes (a `cadre stop`) get it
 * within their busy timeout.
 *
 * `onUndo` is called whenever written but uncommitted work is undone, so caches derived
 * from it (the next `seq` of a run) can be dropped.
 */
export function createGroupCommit(database: DatabaseSync, options: { onUndo: () => void }): GroupCommit {
  const begin = database.prepare('BEGIN IMMEDIATE');
  const commitStatement = database.prepare('COMMIT');
  const rollback = database.prepare('ROLLBACK');
  const savepoint = database.prepare('SAVEPOINT store_write');
  const release = database.prepare('RELEASE store_write');
  const rollbackToSavepoint = database.prepare('ROLLBACK TO store_write');

  let batch: Batch | null = null;
  let scheduled: NodeJS.Immediate | null = null;

  function openBatch(): Batch {
    if (batch) return batch;
    begin.run();
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<void>((resolvePromise, rejectPromise) => {
      resolve = resolvePromise;
      reject = rejectPromise;
    });
    // Callers hold derived promises; a batch nobody waits on must not crash the process.
    promise.catch(() => {});
    batch = { promise, resolve, reject };
    scheduled = setImmediate(commit);
    return batch;
  }

  function commit(): void {
    if (scheduled) clearImmediate(scheduled);
    scheduled = null;
    const current = batch;
    if (!current) return;
    batch = null;
    try {
      commitStatement.run();
      current.resolve();
    } catch (error) {
      options.onUndo();
      if (database.isTransaction) {
        try {
          rollback.run();
        } catch {
          // The original commit error is the one worth reporting.
        }
      }
      current.reject(error);
    }
  }

  function abandonBatch(cause: unknown): void {
    const current = batch;
    batch = null;
    if (scheduled) clearImmediate(scheduled);
    scheduled = null;
    current?.reject(new Error('The store transaction was rolled back by SQLite; this write was lost.', { cause }));
  }

  return {
    write<T>(work: () => T, writeOptions: { atomic?: boolean } = {}): Promise<T> {
      let current: Batch;
      let value: T;
      try {
        current = openBatch();
      } catch (error) {
        return Promise.reject(error);
      }
      const atomic = writeOptions.atomic === true;
      let savepointOpen = false;
      try {
        if (atomic) {
          savepoint.run();
          savepointOpen = true;
        }
        value = work();
        if (atomic) {
          release.run();
          savepointOpen = false;
        }
      } catch (error) {
        options.onUndo();
        if (!database.isTransaction) {
          // Some errors (I/O, full disk) make SQLite roll back the whole transaction.
          abandonBatch(error);
        } else if (savepointOpen) {
          rollbackToSavepoint.run();
          release.run();
        }
        return Promise.reject(error);
      }
      return current.promise.then(() => value);
    },

    flush(): Promise<void> {
      const current = batch;
      commit();
      return current ? current.promise : Promise.resolve();
    },
  };
}

import { resolve } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { StoreFailureError } from '../store-failure-error.ts';

/** Writes that share one transaction, committed together a little later. */
export interface GroupCommit {
  /**
   * Runs `work` at once inside the shared transaction, so reads on this connection see it
   * immediately, and resolves with its value without waiting for the COMMIT (asynchronous
   * commit: see `createGroupCommit`). `work` should check everything before it changes
   * anything: what it did before throwing stays in the transaction. Rejects when `work`
   * throws, or once a commit has failed.
   */
  write<T>(work: () => T): Promise<T>;
  /** Commits the open transaction now; resolves once everything written so far is committed. */
  flush(): Promise<void>;
  /** Commits what is open and stops being committed early by the file's other connections in this process (the store closes). */
  release(): void;
}

/**
 * The group commits of this process, by database file. Connections of one process share its
 * locks, and SQLite's busy wait blocks the thread: a write on one connection while another of
 * this process holds the write lock in its open transaction would wait for a COMMIT that cannot
 * come until the wait ends, and fail ("database is locked"). So before it begins, a transaction
 * commits the file's other open ones in this process (a commit may come early at any time).
 */
const openOnFile = new Map<string, Set<() => void>>();

/** Options of `createGroupCommit`. */
export interface GroupCommitOptions {
  /**
   * The longest a transaction stays open while writes keep coming in one event-loop turn
   * (a chain of promises that never yields). Also bounds what a crash can lose.
   */
  maxBatchMs: number;
  /** Called right after each BEGIN, holding the write lock: caches of what other connections may have changed get checked here. */
  afterBegin?: () => void;
  /** Called right before each COMMIT, inside the transaction: rows kept back get written here. */
  beforeCommit?: () => void;
  /** Called whenever a write fails or uncommitted work is lost, so derived caches can be dropped. */
  onUndo: () => void;
  /** Called when the whole open transaction is lost (a failed commit): rows kept back go with it. */
  onRollback?: () => void;
  /** The database, named in the failure's message; its other connections in this process commit before this one begins. */
  path?: string;
  /** Called once, when a commit fails and the store stops taking writes. */
  onFailure?: (failure: StoreFailureError) => void;
}

/**
 * Group commit with asynchronous acknowledgement over one SQLite connection. A COMMIT costs
 * far more than a statement (every page the transaction touched goes to the WAL), so the first
 * write opens a transaction (`BEGIN IMMEDIATE`), the writes that follow join it, and one COMMIT
 * ends it: at the end of the event-loop turn (`setImmediate`), or as soon as the transaction is
 * `maxBatchMs` old, whichever comes first.
 *
 * Writes resolve once applied, not once committed (PostgreSQL's `synchronous_commit = off`
 * makes the same trade): reads on this connection see them at once, the commits keep their
 * order, and the file is always a consistent prefix of what was written. A crash of the process
 * loses at most the last open transaction; `flush()` waits for the commit where that matters.
 * The write lock is released at the end of every event-loop turn, so another process (a
 * `cadre stop`) gets it within its busy timeout.
 *
 * A failed COMMIT rolls the transaction back and the store stops: writes acknowledged since the
 * previous commit are lost, so every later write and flush rejects with that error.
 */
export function createGroupCommit(database: DatabaseSync, options: GroupCommitOptions): GroupCommit {
  const begin = database.prepare('BEGIN IMMEDIATE');
  const commitStatement = database.prepare('COMMIT');
  const rollback = database.prepare('ROLLBACK');

  let open = false;
  let openedAt = 0;
  let scheduled: NodeJS.Immediate | null = null;
  let failure: StoreFailureError | null = null;
  const file = options.path === undefined || options.path === ':memory:' || options.path === '' ? undefined : resolve(options.path);
  let peers = file === undefined ? undefined : openOnFile.get(file);
  if (file !== undefined && peers === undefined) {
    peers = new Set();
    openOnFile.set(file, peers);
  }
  const commitEarly = () => commit();
  peers?.add(commitEarly);

  function openTransaction(): void {
    if (open) {
      if (performance.now() - openedAt < options.maxBatchMs) return;
      commit();
      if (failure) throw failure;
    }
    if (peers !== undefined && peers.size > 1) for (const peer of peers) if (peer !== commitEarly) peer();
    begin.run();
    open = true;
    openedAt = performance.now();
    options.afterBegin?.();
    scheduled ??= setImmediate(commit);
  }

  function commit(): void {
    if (scheduled) clearImmediate(scheduled);
    scheduled = null;
    if (!open) return;
    open = false;
    try {
      options.beforeCommit?.();
      commitStatement.run();
    } catch (error) {
      loseTransaction(error);
    }
  }

  /** The open transaction is gone (a failed COMMIT, or SQLite rolled it back): the store stops. */
  function loseTransaction(cause: unknown): void {
    open = false;
    options.onUndo();
    options.onRollback?.();
    if (database.isTransaction) {
      try {
        rollback.run();
      } catch {
        // The error that made us roll back is the one worth reporting.
      }
    }
    fail(cause);
  }

  function fail(cause: unknown): void {
    if (failure) return;
    failure = new StoreFailureError(cause, options.path);
    options.onFailure?.(failure);
  }

  return {
    write<T>(work: () => T): Promise<T> {
      if (failure) return Promise.reject(failure);
      try {
        openTransaction();
      } catch (error) {
        return Promise.reject(error);
      }
      try {
        return Promise.resolve(work());
      } catch (error) {
        if (!database.isTransaction) {
          // Some errors (I/O, full disk) make SQLite roll back the whole transaction, and with
          // it writes that were already acknowledged.
          loseTransaction(error);
        } else {
          options.onUndo();
        }
        return Promise.reject(error);
      }
    },

    flush(): Promise<void> {
      commit();
      return failure ? Promise.reject(failure) : Promise.resolve();
    },

    release() {
      commit();
      peers?.delete(commitEarly);
      if (peers?.size === 0 && file !== undefined) openOnFile.delete(file);
    },
  };
}

import { stat } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';

/** Options of {@link startBackgroundCheckpoints}. */
export interface BackgroundCheckpointOptions {
  /** The `-wal` file's size from which checkpoints move to the worker thread. @default 4 MiB */
  startAtBytes?: number;
  /** How often the worker checkpoints what was committed since its last checkpoint. @default 100 */
  periodMs?: number;
  /** How often the `-wal` file's size is looked at until the worker starts. @default 500 */
  watchMs?: number;
  /** Told when the worker fails (the writer's own checkpoints go on as before). */
  onError?: (error: unknown) => void;
}

/** The worker thread of {@link startBackgroundCheckpoints}, once the database needs one. */
export interface BackgroundCheckpoints {
  /** Whether the worker thread runs now. */
  readonly running: boolean;
  /** Ends the worker thread (its connection closed first), so the store's own close is the last. */
  stop(): Promise<void>;
}

/**
 * Takes most of a WAL database's checkpoint work off the event loop's thread once its `-wal` file
 * has grown past `startAtBytes`: a worker thread with its own connection runs a PASSIVE checkpoint
 * every `periodMs`, copying committed pages into the database file and syncing both files. A
 * PASSIVE checkpoint takes no lock a writer or reader waits for. The writer's connection keeps its
 * own automatic checkpoint (`walAutocheckpointPages` of `openDatabase`), which bounds the file and
 * restarts the WAL as before, but finds the pages already copied and little left to sync: at N=200
 * fan-out that checkpoint used to copy ~16 MB and sync it (~11 ms per fsync) inside a commit.
 *
 * Durability is unchanged: a checkpoint only copies pages already committed to the WAL, and a
 * process that dies in the middle of one leaves the WAL to the next connection, as on any crash.
 * If the worker fails, the writer's own checkpoints simply do all the work again.
 *
 * @example
 * const checkpoints = startBackgroundCheckpoints('./.cadre/cadre.db');
 * // ...
 * await checkpoints.stop();
 * database.close();
 */
export function startBackgroundCheckpoints(path: string, options: BackgroundCheckpointOptions = {}): BackgroundCheckpoints {
  const { startAtBytes = 4 * 1024 * 1024, periodMs = 100, watchMs = 500, onError } = options;
  let worker: Worker | undefined;
  let stopped = false;
  let looking = false;

  const watch = setInterval(() => {
    if (looking) return;
    looking = true;
    stat(`${path}-wal`).then(
      (info) => {
        looking = false;
        if (!stopped && worker === undefined && info.size >= startAtBytes) start();
      },
      () => {
        looking = false;
      },
    );
  }, watchMs);
  watch.unref();

  function start(): void {
    clearInterval(watch);
    worker = new Worker(workerSource, { eval: true, workerData: { path, periodMs } });
    worker.unref();
    worker.on('error', (error) => {
      worker = undefined;
      onError?.(error);
    });
  }

  return {
    get running() {
      return worker !== undefined;
    },
    async stop() {
      stopped = true;
      clearInterval(watch);
      const ending = worker;
      worker = undefined;
      if (ending === undefined) return;
      const exited = new Promise<void>((resolve) => ending.once('exit', () => resolve()));
      // Unreferenced, the worker would let the process end before its exit is heard, leaving
      // this await (a script's `await store.close()`) unsettled.
      ending.ref();
      ending.postMessage('stop');
      await exited;
    },
  };
}

/**
 * The worker thread: its own connection, a PASSIVE checkpoint every `periodMs` (a busy one, when
 * another connection checkpoints at that moment, is simply skipped), and a clean close on 'stop'.
 * Node 22 and 23 print an experimental warning when `node:sqlite` loads; it is dropped here as in
 * `loadSqlite`.
 */
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const emitWarning = process.emitWarning;
process.emitWarning = () => {};
const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
process.emitWarning = emitWarning;
const database = new DatabaseSync(workerData.path, { timeout: 0 });
database.exec('PRAGMA synchronous = NORMAL');
const checkpoint = database.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    checkpoint.get();
  } catch {
    // SQLITE_BUSY: another connection checkpoints now.
  }
}, workerData.periodMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  database.close();
  parentPort.close();
});
`;

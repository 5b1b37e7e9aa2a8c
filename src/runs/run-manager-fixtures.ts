import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { sessionFixture } from '../store/store-fixtures.ts';
import type { Store } from '../store/store.ts';
import { createRunBus } from './run-bus.ts';
import { createRunLedger, type RunLedger } from './run-ledger.ts';
import type { RunExecutor } from './run-executor.ts';
import { createRunManager, type RunManager, type RunManagerOptions } from './run-manager.ts';

/** A run manager for tests and what it stands on: an in-memory store holding session `ses_1`. */
export interface RunManagerFixture {
  runs: RunManager;
  store: Store;
  ledger: RunLedger;
  /** The test clock: 10 ms later at each call. */
  now: () => string;
}

/**
 * A run manager over an in-memory SQLite store with the parent session `ses_1` stored, a clock
 * that moves 10 ms per reading from 2026-01-01, ids `<prefix>_1`, `<prefix>_2`, ..., and no
 * coordination between processes.
 * @param options.limits the caps (maxResultChars 8000 and maxActiveGlobal 64 unless given)
 */
export async function createRunManagerFixture(options: {
  executor: RunExecutor;
  ownerId?: string;
  limits: Partial<RunManagerOptions['limits']> & Pick<RunManagerOptions['limits'], 'maxActivePerParent' | 'maxQueuedPerParent'>;
}): Promise<RunManagerFixture> {
  const store = createSqliteStore({ path: ':memory:' });
  const bus = createRunBus();
  let clock = Date.parse('2026-01-01T00:00:00.000Z');
  const now = () => new Date((clock += 10)).toISOString();
  let ids = 0;
  const coordination = { publish: () => {}, subscribe: () => () => {}, close: async () => {} };
  const ledger = createRunLedger({ store, bus, now, coordination });
  const runs = createRunManager({
    store,
    bus,
    ledger,
    now,
    newId: (prefix) => `${prefix}_${++ids}`,
    ownerId: options.ownerId ?? 'host:1:me',
    executor: options.executor,
    coordination,
    limits: { maxActiveGlobal: 64, maxResultChars: 8000, ...options.limits },
  });
  await store.createSession(sessionFixture());
  return { runs, store, ledger, now };
}

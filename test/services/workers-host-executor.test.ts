import { afterAll, describe, expect, it } from 'vitest';
import { createPollingCoordination } from '../../src/coordination/polling-coordination.ts';
import { createBullmqExecutor } from '../../src/executors/bullmq/bullmq-executor.ts';
import { createRunBus } from '../../src/runs/run-bus.ts';
import type { RunLedger } from '../../src/runs/run-ledger.ts';
import { RunDetachSignal } from '../../src/runs/run-stop.ts';
import type { RunRecord } from '../../src/store/records.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { runFixture } from '../../src/store/store-fixtures.ts';
import type { Store } from '../../src/store/store.ts';
import { redisUrl } from './service-urls.ts';
import { until } from './workers-fixtures.ts';

describe.skipIf(!redisUrl)(`the host's run queue executor${redisUrl ? '' : ' [skipped: set CADRE_TEST_REDIS_URL, as .ci/run does]'}`, () => {
  const inner = createSqliteStore({ path: ':memory:' });
  afterAll(() => inner.close());

  it('looks at the store no more once a run was let go and the executor closed, even when a look was under way then', async () => {
    // The store answers getRun only when the test says so: a look of the executor is under way
    // for as long as the test wants.
    const held: Array<() => void> = [];
    let reads = 0;
    const store = new Proxy(inner, {
      get(target, key, receiver) {
        if (key === 'getRun') {
          return () => {
            reads++;
            return new Promise<RunRecord | null>((resolve) => held.push(() => resolve(null)));
          };
        }
        return Reflect.get(target, key, receiver);
      },
    }) as Store;
    const queue = `${redisUrl}?prefix=host-executor-${process.pid}-${Date.now()}`;
    const executor = createBullmqExecutor({
      queue,
      store,
      ledger: {} as RunLedger,
      bus: createRunBus(),
      coordination: createPollingCoordination({ store: inner }),
      now: () => new Date().toISOString(),
      ownerId: 'host:1:test',
      workspace: process.cwd(),
      settings: () => ({ approvals: 'deny' }),
      checkMs: 50,
    });
    const run = runFixture({ id: `run_${Date.now()}` });
    const controller = new AbortController();
    const executing = executor.execute(run, controller.signal);
    // The executor's periodic look reads the run: hold it there, then let the run go (the host closes).
    await until(async () => (held.length === 1 ? true : undefined), 10_000, 'a look at the store');
    controller.abort(new RunDetachSignal());
    await until(async () => (held.length === 2 ? true : undefined), 10_000, 'the read of the outcome');
    for (const release of held.splice(0)) release();
    await executing;
    await executor.close();
    const readsAtClose = reads;
    await new Promise((done) => setTimeout(done, 500));
    for (const release of held.splice(0)) release();
    // Ten periods of 50 ms: a look rescheduled by the one under way would have read again.
    expect(reads - readsAtClose).toBe(0);
  }, 30_000);
});

import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { createPollingCoordination } from '../../src/coordination/polling-coordination.ts';
import { createBullmqExecutor } from '../../src/executors/bullmq/bullmq-executor.ts';
import { connectionOf, parseQueueUrl, runQueueName } from '../../src/executors/bullmq/run-job.ts';
import { createRunBus } from '../../src/runs/run-bus.ts';
import type { RunLedger } from '../../src/runs/run-ledger.ts';
import { RunDetachSignal } from '../../src/runs/run-stop.ts';
import type { RunEventRecord, RunRecord } from '../../src/store/records.ts';
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
    // A job still waiting for a worker is looked at in the queue only: take it away (as a Redis
    // that lost it), so the look reads the store.
    const jobs = new Queue(runQueueName, { connection: connectionOf(parseQueueUrl(queue)), prefix: parseQueueUrl(queue).prefix });
    await until(async () => ((await jobs.getJobState(run.id)) === 'waiting' ? true : undefined), 10_000, 'the job');
    await jobs.remove(run.id);
    await jobs.close();
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

  it('shows the end of a run that ended on a worker once, before the execution returns, when the end was heard before its live event, or without it', async () => {
    for (const liveEndAfterMs of [100, null]) {
      const run = runFixture({ id: `run_${Date.now()}_${liveEndAfterMs}`, parent_session_id: 'ses_parent', child_session_id: 'ses_child', status: 'running' });
      const ended: RunRecord = {
        ...run,
        status: 'completed',
        ended_at: new Date().toISOString(),
        result: { text: 'Done.', truncated: false, original_length: 5 },
      };
      const runEnd: RunEventRecord = { run_id: run.id, seq: 7, at: ended.ended_at!, type: 'run-end', data: { status: 'completed' } };
      let finished = false;
      const store = new Proxy(inner, {
        get(target, key, receiver) {
          if (key === 'getRun') return async () => (finished ? ended : run);
          if (key === 'listRunEvents')
            return async (_runId: string, options?: { afterSeq?: number }) => [runEnd].filter((event) => event.seq > (options?.afterSeq ?? 0));
          return Reflect.get(target, key, receiver);
        },
      }) as Store;
      const coordination = createPollingCoordination({ store: inner });
      const bus = createRunBus();
      const shown: string[] = [];
      bus.subscribe((event) => {
        if (event.type === 'run-event') shown.push(event.event.type);
      });
      const executor = createBullmqExecutor({
        queue: `${redisUrl}?prefix=host-executor-${process.pid}-${Date.now()}`,
        store,
        ledger: {} as RunLedger,
        bus,
        coordination,
        now: () => new Date().toISOString(),
        ownerId: 'host:1:test',
        workspace: process.cwd(),
        settings: () => ({ approvals: 'deny' }),
      });
      const executing = executor.execute(run, new AbortController().signal).then((outcome) => {
        shown.push('returned');
        return outcome;
      });
      await new Promise((done) => setTimeout(done, 300));
      // The worker's end, as the store says it (polled), ahead of its live event.
      finished = true;
      coordination.publish({ type: 'run-ended', run_id: run.id, parent_session_id: run.parent_session_id, status: 'completed' });
      if (liveEndAfterMs !== null) {
        await new Promise((done) => setTimeout(done, liveEndAfterMs));
        coordination.publish({ type: 'live-event', parent_session_id: run.parent_session_id, run: ended, event: runEnd });
      }
      expect((await executing).text).toBe('Done.');
      await executor.close();
      expect(shown).toEqual(['run-end', 'returned']);
    }
  }, 30_000);
});

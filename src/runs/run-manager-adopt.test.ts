import { describe, expect, it } from 'vitest';
import { eventFixture, runFixture, sessionFixture } from '../store/store-fixtures.ts';
import type { RunExecutor } from './run-executor.ts';
import { createRunManagerFixture } from './run-manager-fixtures.ts';

describe('runs a process adopts (a worker given jobs by its host)', () => {
  it('carries out every adopted running run at once, whatever its own per-parent cap: the host’s caps already decided', async () => {
    const executing = new Set<string>();
    let mostAtOnce = 0;
    const release = Promise.withResolvers<void>();
    const executor: RunExecutor = {
      async execute(run) {
        executing.add(run.id);
        mostAtOnce = Math.max(mostAtOnce, executing.size);
        await release.promise;
        executing.delete(run.id);
        return { text: 'done', lastText: 'done', finishReason: 'stop', steps: 1 };
      },
    };
    const { runs, store, now } = await createRunManagerFixture({
      executor,
      ownerId: 'worker:1:me',
      limits: { maxActivePerParent: 2, maxQueuedPerParent: 50 },
    });
    const adopted = [];
    for (let index = 0; index < 5; index++) {
      await store.createSession(sessionFixture({ id: `ses_child_${index}`, parent_run_id: `run_${index}` }));
      const run = runFixture({ id: `run_${index}`, child_session_id: `ses_child_${index}`, status: 'running', started_at: now() });
      await store.insertRun(run, eventFixture(run.id, 'run-start'));
      adopted.push(run);
    }
    for (const run of adopted) runs.adopt(run);
    await expect.poll(() => executing.size).toBe(5);
    release.resolve();
    const ended = await Promise.all(adopted.map((run) => runs.wait(run.id)));
    expect(ended.map((run) => run?.status)).toEqual(Array(5).fill('completed'));
    expect(mostAtOnce).toBe(5);
    await runs.close();
    await store.close();
  });

  it('starts an adopted running run from the record given as fresh, without moving or reading it first', async () => {
    const given: Array<string | null> = [];
    const executor: RunExecutor = {
      async execute(run) {
        given.push(run.lease_owner);
        return { text: 'done', lastText: 'done', finishReason: 'stop', steps: 1 };
      },
    };
    const { runs, store, ledger, now } = await createRunManagerFixture({
      executor,
      ownerId: 'worker:1:me',
      limits: { maxActivePerParent: 2, maxQueuedPerParent: 50 },
    });
    await store.createSession(sessionFixture({ id: 'ses_child_0', parent_run_id: 'run_0' }));
    const run = runFixture({ id: 'run_0', child_session_id: 'ses_child_0', status: 'running', started_at: now() });
    await store.insertRun(run, eventFixture(run.id, 'run-start'));
    const claimed = await ledger.update(run.id, { lease_owner: 'worker:1:me' });
    let reads = 0;
    let moves = 0;
    const getRun = store.getRun.bind(store);
    const transitionRun = store.transitionRun.bind(store);
    store.getRun = (id) => (reads++, getRun(id));
    store.transitionRun = (change) => (change.to === 'running' && moves++, transitionRun(change));
    runs.adopt(claimed!, { fresh: true });
    const ended = await runs.wait(run.id);
    expect(ended.status).toBe('completed');
    expect(given).toEqual(['worker:1:me']);
    expect({ reads, moves }).toEqual({ reads: 0, moves: 0 });
    await runs.close();
    await store.close();
  });
});

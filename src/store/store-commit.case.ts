import { describe, expect, it } from 'vitest';
import type { RunRecord } from './records.ts';
import type { StoreCaseContext } from './store.case.ts';
import { eventFixture, runFixture } from './store-fixtures.ts';

/** Grouped writes: ordering, read-your-writes, failures and durability. */
export function commitCases({ store, reopen }: StoreCaseContext): void {
  describe('writes', () => {
    it('lets reads see a write before its commit resolves', async () => {
      const inserted = store().insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
      const moved = store().transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
      expect((await store().getRun('run_1'))?.status).toBe('running');
      expect((await store().listRunEvents('run_1')).map((event) => event.type)).toEqual(['run-queued', 'run-start']);
      await inserted;
      expect((await moved)?.status).toBe('running');
    });

    it('resolves many concurrent writes, all readable afterwards and after reopening', async () => {
      const count = 200;
      const runs = Array.from({ length: count }, (_, index) => runFixture({ id: `run_${String(index).padStart(3, '0')}` }));
      await Promise.all(runs.map((run) => store().insertRun(run, eventFixture(run.id, 'run-queued'))));
      const writes: Array<Promise<unknown>> = [];
      for (const run of runs) {
        writes.push(store().transitionRun({ id: run.id, from: ['queued'], to: 'running', event: eventFixture(run.id, 'run-start') }));
        writes.push(store().appendRunEvents([eventFixture(run.id, 'step-start')]));
        writes.push(store().updateRun(run.id, { turns: 1 }, [eventFixture(run.id, 'activity', { text: 'working' })]));
        writes.push(store().appendMessages([{ session_id: run.child_session_id, role: 'user', content: run.task, created_at: run.created_at }]));
      }
      const results = await Promise.all(writes);
      expect(results.filter((result, index) => index % 4 === 0 && (result as RunRecord | null)?.status === 'running')).toHaveLength(count);

      const check = async () => {
        const stored = await store().listRuns({ statuses: ['running'] });
        expect(stored).toHaveLength(count);
        expect(stored.every((run) => run.turns === 1)).toBe(true);
        const events = await store().listRunEvents('run_123');
        expect(events.map((event) => [event.seq, event.type])).toEqual([
          [1, 'run-queued'],
          [2, 'run-start'],
          [3, 'step-start'],
          [4, 'activity'],
        ]);
        expect(await store().listMessages('ses_child_run_199')).toHaveLength(1);
      };
      await check();
      if (reopen) {
        await reopen();
        await check();
        // Counters start again from what is stored.
        await store().appendRunEvents([eventFixture('run_123', 'run-end')]);
        expect((await store().listRunEvents('run_123', { afterSeq: 4 })).map((event) => event.seq)).toEqual([5]);
      }
    });

    it('rejects a failing write without losing the writes grouped with it', async () => {
      await store().insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
      const before = store().appendRunEvents([eventFixture('run_1', 'activity', { text: 'before' })]);
      const duplicate = store().insertRun(runFixture({ status: 'running' }), eventFixture('run_1', 'run-start'));
      const after = store().appendRunEvents([eventFixture('run_1', 'activity', { text: 'after' })]);
      await expect(duplicate).rejects.toThrow();
      await Promise.all([before, after]);
      expect((await store().getRun('run_1'))?.status).toBe('queued');
      const events = await store().listRunEvents('run_1');
      expect(events.map((event) => [event.seq, event.type, event.data.text])).toEqual([
        [1, 'run-queued', undefined],
        [2, 'activity', 'before'],
        [3, 'activity', 'after'],
      ]);
    });

    it('flushes on demand and resolves a flush with nothing to write', async () => {
      await store().flush();
      const inserted = store().insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
      await store().flush();
      await inserted;
      expect(await store().getRun('run_1')).not.toBeNull();
    });
  });
}

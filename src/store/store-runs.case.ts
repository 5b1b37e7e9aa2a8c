import { describe, expect, it } from 'vitest';
import type { RunPatch, RunQuery } from './store.ts';
import type { StoreCaseContext } from './store.case.ts';
import { eventFixture, runFixture } from './store-fixtures.ts';

/** Runs, their transitions, events and leases. */
export function runCases({ store }: StoreCaseContext): void {
  const typesOf = async (runId: string) => (await store().listRunEvents(runId)).map((event) => event.type);

  describe('runs', () => {
    it('stores a run with its first event and returns every field as stored', async () => {
      const run = runFixture({
        context: 'Some context',
        result: { text: 'Done', truncated: false, original_length: 4 },
        error: { kind: 'max_turns', message: 'Out of turns' },
        usage: { input_tokens: 10, output_tokens: 5 },
        warnings: [{ kind: 'long_running', at: '2025-01-01T00:10:00.000Z' }],
        notification: { delivered_at: null, suppressed: true },
        stop_requested_by: 'user',
      });
      await store().insertRun(run, eventFixture('run_1', 'run-queued'));
      expect(await store().getRun('run_1')).toEqual(run);
      expect(await store().listRunEvents('run_1')).toEqual([{ run_id: 'run_1', seq: 1, at: '2025-01-01T00:00:02.000Z', type: 'run-queued', data: {} }]);
      expect(await store().getRun('run_missing')).toBeNull();
    });

    it("keeps a run's output_schema and its result's structured value, nested, as given, sharing nothing with the caller", async () => {
      const schema = { type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } } } };
      await store().insertRun(runFixture({ output_schema: schema }), eventFixture('run_1', 'run-queued'));
      const value = { items: [{ id: 1 }, { id: 2, tags: ['a', 'b'] }], note: null };
      const result = { text: JSON.stringify(value, null, 2), truncated: false, original_length: 60, value };
      const moved = await store().transitionRun({ id: 'run_1', from: ['queued'], to: 'completed', patch: { result }, event: eventFixture('run_1', 'run-end') });
      value.items[0].id = 99;
      schema.properties.items.type = 'string';
      const stored = await store().getRun('run_1');
      expect(stored?.output_schema).toEqual({
        type: 'object',
        properties: { items: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } } },
      });
      expect(stored?.result?.value).toEqual({ items: [{ id: 1 }, { id: 2, tags: ['a', 'b'] }], note: null });
      expect(moved?.result?.value).toEqual(stored?.result?.value);
      expect((await store().listRuns({ parent_session_id: 'ses_1' }))[0].result?.value).toEqual(stored?.result?.value);
    });

    it('keeps what a forked run copied (forked_from) and the cache counts of its usage', async () => {
      const run = runFixture({ forked_from: 'ses_1', usage: { input_tokens: 120, output_tokens: 5, cache_read_tokens: 100, cache_write_tokens: 15 } });
      await store().insertRun(run, eventFixture('run_1', 'run-queued'));
      expect(await store().getRun('run_1')).toEqual(run);
      expect((await store().listRuns({ parent_session_id: 'ses_1' }))[0]).toMatchObject({ forked_from: 'ses_1', usage: { cache_read_tokens: 100 } });
      await store().patchRun('run_1', { usage: { input_tokens: 130, output_tokens: 6, cache_read_tokens: 110, cache_write_tokens: 15 } });
      expect((await store().getRun('run_1'))?.usage).toEqual({ input_tokens: 130, output_tokens: 6, cache_read_tokens: 110, cache_write_tokens: 15 });
      expect((await store().getRun('run_1'))?.forked_from).toBe('ses_1');
    });

    it('moves a run that is in an allowed state, applies the patch and writes the event', async () => {
      await store().insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
      const moved = await store().transitionRun({
        id: 'run_1',
        from: ['queued'],
        to: 'running',
        patch: { started_at: '2025-01-01T00:00:04.000Z', usage: { input_tokens: 1, output_tokens: 2 } },
        event: eventFixture('run_1', 'run-start'),
      });
      const expected = runFixture({ status: 'running', started_at: '2025-01-01T00:00:04.000Z', usage: { input_tokens: 1, output_tokens: 2 } });
      expect(moved).toEqual(expected);
      expect(await store().getRun('run_1')).toEqual(expected);
      expect(await typesOf('run_1')).toEqual(['run-queued', 'run-start']);
    });

    it('refuses a transition from a state not in `from`, changing nothing and writing no event', async () => {
      await store().insertRun(runFixture({ status: 'completed' }), eventFixture('run_1', 'run-queued'));
      const refused = await store().transitionRun({
        id: 'run_1',
        from: ['queued', 'running'],
        to: 'canceled_by_user',
        patch: { ended_at: '2025-01-01T00:00:09.000Z' },
        event: eventFixture('run_1', 'run-end', { status: 'canceled_by_user' }),
      });
      expect(refused).toBeNull();
      expect(await store().getRun('run_1')).toEqual(runFixture({ status: 'completed' }));
      expect(await typesOf('run_1')).toEqual(['run-queued']);
      const unknown = await store().transitionRun({ id: 'run_x', from: ['queued'], to: 'running', event: eventFixture('run_x', 'run-start') });
      expect(unknown).toBeNull();
      expect(await store().listRunEvents('run_x')).toEqual([]);
    });

    it('never moves a finished run, even when the caller allows its state', async () => {
      await store().insertRun(runFixture({ status: 'failed' }), eventFixture('run_1', 'run-queued'));
      const moved = await store().transitionRun({ id: 'run_1', from: ['failed'], to: 'running', event: eventFixture('run_1', 'run-start') });
      expect(moved).toBeNull();
      expect((await store().getRun('run_1'))?.status).toBe('failed');
      expect(await typesOf('run_1')).toEqual(['run-queued']);
    });

    it('lets only one of two racing transitions from the same state win', async () => {
      await store().insertRun(runFixture({ status: 'running' }), eventFixture('run_1', 'run-queued'));
      const end = (to: 'completed' | 'canceled_by_user') =>
        store().transitionRun({ id: 'run_1', from: ['running'], to, event: eventFixture('run_1', 'run-end', { status: to }) });
      const [completed, canceled] = await Promise.all([end('completed'), end('canceled_by_user')]);
      expect(completed?.status).toBe('completed');
      expect(canceled).toBeNull();
      expect(await typesOf('run_1')).toEqual(['run-queued', 'run-end']);
    });

    it('updates non-state fields with events, and returns null for an unknown run without writing', async () => {
      await store().insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
      const updated = await store().updateRun('run_1', { turns: 2, activity: { kind: 'tool', tool: 'read_file', argument: 'src/a.ts' }, context: null }, [
        eventFixture('run_1', 'step-start'),
        eventFixture('run_1', 'tool-call-start', { tool: 'read_file', label: 'src/a.ts' }),
      ]);
      expect(updated).toEqual(runFixture({ turns: 2, activity: { kind: 'tool', tool: 'read_file', argument: 'src/a.ts' } }));
      expect(updated?.last_activity).toBe('read_file src/a.ts');
      expect(await typesOf('run_1')).toEqual(['run-queued', 'step-start', 'tool-call-start']);
      expect(await store().updateRun('run_1', {}, [eventFixture('run_1', 'activity', { text: 'thinking' })])).toEqual(updated);
      expect(await store().updateRun('run_x', { turns: 1 }, [eventFixture('run_x', 'activity')])).toBeNull();
      expect(await store().listRunEvents('run_x')).toEqual([]);
    });

    it('patches non-state fields with events without reading the run back', async () => {
      await store().insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
      expect(
        await store().patchRun('run_1', { turns: 3, activity: { kind: 'text', text: 'noop' } }, [
          eventFixture('run_1', 'activity', { kind: 'text', text: 'noop' }),
        ]),
      ).toBe(true);
      expect(await store().getRun('run_1')).toEqual(runFixture({ turns: 3, last_activity: 'noop' }));
      expect(await typesOf('run_1')).toEqual(['run-queued', 'activity']);
      expect(await store().patchRun('run_1', {}, [eventFixture('run_1', 'step-start')])).toBe(true);
      expect(await store().patchRun('run_x', { turns: 1 }, [eventFixture('run_x', 'activity')])).toBe(false);
      expect(await store().listRunEvents('run_x')).toEqual([]);
      await expect(store().patchRun('run_1', { status: 'completed' } as unknown as RunPatch)).rejects.toThrow(/status/);
    });

    it('never lets updateRun change the status', async () => {
      await store().insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
      const sneaky = { status: 'completed', turns: 5 } as unknown as RunPatch;
      await expect(store().updateRun('run_1', sneaky)).rejects.toThrow(/status/);
      expect(await store().getRun('run_1')).toEqual(runFixture());
      expect(await typesOf('run_1')).toEqual(['run-queued']);
    });

    it('gives events consecutive seq in the order they were appended, and pages them', async () => {
      await store().insertRun(runFixture(), eventFixture('run_1', 'run-queued'));
      await Promise.all(Array.from({ length: 30 }, (_, index) => store().appendRunEvents([eventFixture('run_1', 'activity', { text: `a${index}` })])));
      await store().appendRunEvents([eventFixture('run_2', 'run-queued'), eventFixture('run_1', 'run-end')]);
      const events = await store().listRunEvents('run_1');
      expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 32 }, (_, index) => index + 1));
      expect(events.slice(1, 31).map((event) => event.data.text)).toEqual(Array.from({ length: 30 }, (_, index) => `a${index}`));
      expect((await store().listRunEvents('run_2')).map((event) => event.seq)).toEqual([1]);
      const page = await store().listRunEvents('run_1', { afterSeq: 10, limit: 3 });
      expect(page.map((event) => event.seq)).toEqual([11, 12, 13]);
    });
  });

  describe('listRuns', () => {
    const runs = [
      runFixture({ id: 'run_a', created_at: '2025-01-01T00:00:01.000Z', status: 'running', lease_owner: 'p1', lease_expires_at: '2025-01-01T00:01:00.000Z' }),
      runFixture({ id: 'run_b', created_at: '2025-01-01T00:00:02.000Z', status: 'completed', stop_requested_at: '2025-01-01T00:00:30.000Z' }),
      runFixture({ id: 'run_c', created_at: '2025-01-01T00:00:03.000Z', parent_session_id: 'ses_2', parent_run_id: 'run_a' }),
      runFixture({ id: 'run_d', created_at: '2025-01-01T00:00:03.000Z', status: 'running', lease_owner: 'p2', lease_expires_at: '2025-01-01T00:03:00.000Z' }),
    ];
    const ids = async (query: RunQuery) => (await store().listRuns(query)).map((run) => run.id);

    it('filters by every field of the query, newest first by default', async () => {
      for (const run of runs) await store().insertRun(run, eventFixture(run.id, 'run-queued'));
      expect(await ids({})).toEqual(['run_d', 'run_c', 'run_b', 'run_a']);
      expect(await ids({ order: 'oldest' })).toEqual(['run_a', 'run_b', 'run_c', 'run_d']);
      expect(await ids({ limit: 2 })).toEqual(['run_d', 'run_c']);
      expect(await ids({ parent_session_id: 'ses_1' })).toEqual(['run_d', 'run_b', 'run_a']);
      expect(await ids({ parent_run_id: 'run_a' })).toEqual(['run_c']);
      expect(await ids({ statuses: ['running', 'queued'] })).toEqual(['run_d', 'run_c', 'run_a']);
      expect(await ids({ statuses: [] })).toEqual([]);
      expect(await ids({ lease_owner: 'p1' })).toEqual(['run_a']);
      expect(await ids({ stop_requested: true })).toEqual(['run_b']);
      expect(await ids({ stop_requested: false })).toEqual(['run_d', 'run_c', 'run_a']);
      expect(await ids({ lease_expired_before: '2025-01-01T00:02:00.000Z' })).toEqual(['run_c', 'run_b', 'run_a']);
      expect(await ids({ statuses: ['running'], lease_expired_before: '2025-01-01T00:02:00.000Z', order: 'oldest' })).toEqual(['run_a']);
    });
  });

  describe('leases', () => {
    it('renews the leases of the active runs of one owner only', async () => {
      await store().insertRun(runFixture({ id: 'run_a', status: 'running', lease_owner: 'p1' }), eventFixture('run_a', 'run-queued'));
      await store().insertRun(runFixture({ id: 'run_b', status: 'queued', lease_owner: 'p1' }), eventFixture('run_b', 'run-queued'));
      await store().insertRun(runFixture({ id: 'run_c', status: 'failed', lease_owner: 'p1' }), eventFixture('run_c', 'run-queued'));
      await store().insertRun(runFixture({ id: 'run_d', status: 'running', lease_owner: 'p2' }), eventFixture('run_d', 'run-queued'));
      expect(await store().renewLeases('p1', '2025-01-01T01:00:00.000Z')).toBe(2);
      const leases = (await store().listRuns({ order: 'oldest' })).map((run) => [run.id, run.lease_expires_at]);
      expect(leases).toEqual([
        ['run_a', '2025-01-01T01:00:00.000Z'],
        ['run_b', '2025-01-01T01:00:00.000Z'],
        ['run_c', null],
        ['run_d', null],
      ]);
    });

    it('lets exactly one of two processes claim a run whose lease expired', async () => {
      const lease = { status: 'running' as const, lease_owner: 'dead', lease_expires_at: '2025-01-01T00:01:00.000Z' };
      await store().insertRun(runFixture(lease), eventFixture('run_1', 'run-queued'));
      const claim = (owner: string) => store().claimRun('run_1', owner, '2025-01-01T00:10:00.000Z', '2025-01-01T00:05:00.000Z');
      const [first, second] = await Promise.all([claim('p1'), claim('p2')]);
      expect(first).toEqual(runFixture({ ...lease, lease_owner: 'p1', lease_expires_at: '2025-01-01T00:10:00.000Z' }));
      expect(second).toBeNull();
      expect((await store().getRun('run_1'))?.lease_owner).toBe('p1');
    });

    it('claims an unowned active run, but never a live lease or a finished run', async () => {
      await store().insertRun(runFixture({ id: 'run_a' }), eventFixture('run_a', 'run-queued'));
      await store().insertRun(
        runFixture({ id: 'run_b', status: 'running', lease_owner: 'p1', lease_expires_at: '2025-01-01T00:09:00.000Z' }),
        eventFixture('run_b', 'run-queued'),
      );
      await store().insertRun(runFixture({ id: 'run_c', status: 'completed' }), eventFixture('run_c', 'run-queued'));
      const claim = (id: string) => store().claimRun(id, 'p2', '2025-01-01T00:10:00.000Z', '2025-01-01T00:05:00.000Z');
      expect((await claim('run_a'))?.lease_owner).toBe('p2');
      expect(await claim('run_b')).toBeNull();
      expect(await claim('run_c')).toBeNull();
      expect(await claim('run_missing')).toBeNull();
    });
  });
}

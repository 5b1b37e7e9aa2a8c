import { describe, expect, it } from 'vitest';
import type { RunActivity } from './run-activity.ts';
import type { StoreCaseContext } from './store.case.ts';
import { eventFixture, runFixture } from './store-fixtures.ts';

/** One activity of each kind, with the line docs/runs-and-limits.md shows for it. */
const examples: Array<[RunActivity, string]> = [
  [{ kind: 'queued' }, 'queued'],
  [{ kind: 'waiting_for_slot' }, 'waiting for a slot'],
  [{ kind: 'waiting_for_model' }, 'waiting for model'],
  [{ kind: 'tool', tool: 'grep', argument: 'TODO in src' }, 'grep TODO in src'],
  [{ kind: 'tool', tool: 'agent_list' }, 'agent_list'],
  [{ kind: 'text', text: 'The store keeps the typed value.' }, 'The store keeps the typed value.'],
  [{ kind: 'summarizing', characters: 12000 }, 'summarizing 12000 characters'],
  [{ kind: 'awaiting_approval', tool: 'bash', argument: 'npm test' }, 'awaiting approval: bash npm test'],
  [{ kind: 'denied', tool: 'bash', argument: 'rm -rf build', by: 'person' }, 'denied: bash rm -rf build'],
  [{ kind: 'finished', status: 'completed', detail: 'All done.' }, 'completed: All done.'],
  [{ kind: 'finished', status: 'canceled_by_user' }, 'canceled_by_user'],
];

/** A run's typed activity: kept as data beside its text, and lines stored before read as text. */
export function activityCases({ store, reopen, writeTextActivity }: StoreCaseContext): void {
  describe('run activity', () => {
    it('keeps each kind of typed activity through patches, with its text beside it, after a reopen too', async () => {
      await store().insertRun(runFixture({ status: 'running' }), eventFixture('run_1', 'run-start'));
      for (const [activity, text] of examples) {
        const updated = await store().updateRun('run_1', { activity }, [eventFixture('run_1', 'activity', { ...activity, text })]);
        expect(updated).toMatchObject({ activity, last_activity: text });
        expect(await store().getRun('run_1')).toMatchObject({ activity, last_activity: text });
      }
      await store().patchRun('run_1', { activity: { kind: 'tool', tool: 'read_file', argument: 'src/a.ts' } });
      const reread = reopen ? await (await reopen()).getRun('run_1') : await store().getRun('run_1');
      expect(reread).toMatchObject({ activity: { kind: 'tool', tool: 'read_file', argument: 'src/a.ts' }, last_activity: 'read_file src/a.ts' });
      const [listed] = await store().listRuns({ parent_session_id: 'ses_1' });
      expect(listed).toMatchObject({ activity: { kind: 'tool', tool: 'read_file', argument: 'src/a.ts' }, last_activity: 'read_file src/a.ts' });
      const [, ...events] = await store().listRunEvents('run_1');
      expect(events.map((event) => event.data)).toEqual(examples.map(([activity, text]) => ({ ...activity, text })));
    });

    it('keeps the activity a new run starts with and the one a transition sets', async () => {
      await store().insertRun(runFixture({ activity: { kind: 'queued' } }), eventFixture('run_1', 'run-queued'));
      expect(await store().getRun('run_1')).toMatchObject({ activity: { kind: 'queued' }, last_activity: 'queued' });
      const ended = await store().transitionRun({
        id: 'run_1',
        from: ['queued'],
        to: 'failed',
        patch: { activity: { kind: 'finished', status: 'failed', detail: 'timeout: took too long' } },
        event: eventFixture('run_1', 'run-end'),
      });
      expect(ended).toMatchObject({
        activity: { kind: 'finished', status: 'failed', detail: 'timeout: took too long' },
        last_activity: 'failed: timeout: took too long',
      });
      expect(await store().getRun('run_1')).toEqual(ended);
      expect(await store().updateRun('run_1', { activity: null })).toMatchObject({ activity: null, last_activity: null });
    });

    it('keeps text that looks like a typed value as text', async () => {
      const text = '{"kind":"queued"} is what the store keeps';
      await store().insertRun(runFixture({ status: 'running' }), eventFixture('run_1', 'run-start'));
      await store().updateRun('run_1', { activity: { kind: 'text', text } });
      expect(await store().getRun('run_1')).toMatchObject({ activity: { kind: 'text', text }, last_activity: text });
    });

    it.skipIf(!writeTextActivity)('reads an activity line stored before activity was typed as text only', async () => {
      await store().insertRun(runFixture({ status: 'running' }), eventFixture('run_1', 'run-start'));
      await store().flush();
      for (const text of ['awaiting approval: bash npm test', 'waiting for a slot', '{"kind":"queued"', '{"kind":"tool"}']) {
        await writeTextActivity!('run_1', text);
        const run = reopen ? await (await reopen()).getRun('run_1') : await store().getRun('run_1');
        expect(run).toMatchObject({ activity: { kind: 'text', text }, last_activity: text });
      }
    });
  });
}

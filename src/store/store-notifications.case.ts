import { describe, expect, it } from 'vitest';
import { isNotificationPending } from './records.ts';
import type { MessageCommit } from './store.ts';
import type { StoreCaseContext } from './store.case.ts';
import { eventFixture, runFixture } from './store-fixtures.ts';

const pending = { delivered_at: null, suppressed: false };
const at = '2025-01-01T00:00:05.000Z';

/** A notification as the notifier commits it: the message, and each pending run marked delivered. */
function delivery({
  session_id,
  seq,
  content,
  created_at,
  run_ids,
  delivered_at,
}: {
  session_id: string;
  seq?: number;
  content: unknown;
  created_at: string;
  run_ids: string[];
  delivered_at: string;
}): MessageCommit {
  return {
    session_id,
    seq,
    role: 'user',
    content,
    created_at,
    runs: run_ids.map((id) => ({
      id,
      check: isNotificationPending,
      patch: { notification: { delivered_at, suppressed: false }, lease_owner: null, lease_expires_at: null },
      events: (message) => [{ run_id: id, at: delivered_at, type: 'notification-deliver', data: { session_id, message_seq: message.seq } }],
    })),
  };
}

/** Messages committed with guarded run changes: notifications, delivered together with their message. */
export function notificationCases({ store, reopen }: StoreCaseContext): void {
  const finishedRun = (id: string, notification: { delivered_at: string | null; suppressed: boolean } | null = pending) =>
    runFixture({ id, mode: 'background', status: 'completed', ended_at: at, notification, lease_owner: 'host:1:owner' });

  describe('notifications', () => {
    it('stores the message and marks its runs delivered in one write, and both survive a reopen', async () => {
      await store().insertRun(finishedRun('run_1'), eventFixture('run_1', 'run-queued'));
      await store().insertRun(finishedRun('run_2'), eventFixture('run_2', 'run-queued'));
      await store().appendMessages([{ session_id: 'ses_1', role: 'user', content: 'Go', created_at: at }]);
      const result = await store().commitMessage(
        delivery({
          session_id: 'ses_1',
          content: '<subagent-notification>two</subagent-notification>',
          created_at: at,
          run_ids: ['run_1', 'run_2'],
          delivered_at: at,
        }),
      );
      expect(result.refused).toEqual([]);
      expect(result.message).toEqual({
        session_id: 'ses_1',
        seq: 2,
        role: 'user',
        content: '<subagent-notification>two</subagent-notification>',
        created_at: at,
      });
      expect(result.runs.map(({ run, events: [event] }) => [run.id, run.notification, run.lease_owner, event.type, event.seq, event.data])).toEqual([
        ['run_1', { delivered_at: at, suppressed: false }, null, 'notification-deliver', 2, { session_id: 'ses_1', message_seq: 2 }],
        ['run_2', { delivered_at: at, suppressed: false }, null, 'notification-deliver', 2, { session_id: 'ses_1', message_seq: 2 }],
      ]);
      const current = reopen ? await reopen() : store();
      expect((await current.listMessages('ses_1')).map((message) => message.content)).toEqual(['Go', '<subagent-notification>two</subagent-notification>']);
      expect((await current.getRun('run_1'))?.notification).toEqual({ delivered_at: at, suppressed: false });
      expect((await current.listRunEvents('run_2')).map((event) => event.type)).toEqual(['run-queued', 'notification-deliver']);
      expect(await current.listRuns({ notification_pending: true })).toEqual([]);
    });

    it('rewrites a stored notification when another run joins it, marking only the joining run', async () => {
      await store().insertRun(finishedRun('run_1'), eventFixture('run_1', 'run-queued'));
      await store().insertRun(finishedRun('run_2'), eventFixture('run_2', 'run-queued'));
      const first = await store().commitMessage(delivery({ session_id: 'ses_1', content: 'one', created_at: at, run_ids: ['run_1'], delivered_at: at }));
      await store().flush();
      const later = '2025-01-01T00:00:06.000Z';
      const joined = await store().commitMessage(
        delivery({ session_id: 'ses_1', seq: first.message!.seq, content: 'one and two', created_at: later, run_ids: ['run_2'], delivered_at: later }),
      );
      expect(joined.message).toEqual({ session_id: 'ses_1', seq: 1, role: 'user', content: 'one and two', created_at: at });
      expect(joined.runs.map(({ run }) => run.id)).toEqual(['run_2']);
      expect((await store().listMessages('ses_1')).map((message) => message.content)).toEqual(['one and two']);
      expect((await store().getRun('run_2'))?.notification?.delivered_at).toBe(later);
      await expect(
        store().commitMessage(delivery({ session_id: 'ses_1', seq: 9, content: 'x', created_at: at, run_ids: [], delivered_at: at })),
      ).rejects.toThrow(/No message 9/);
    });

    it('writes nothing when a run is not pending (delivered, suppressed, without one, unknown) and names those runs', async () => {
      await store().insertRun(finishedRun('run_1'), eventFixture('run_1', 'run-queued'));
      await store().insertRun(finishedRun('run_2', { delivered_at: at, suppressed: false }), eventFixture('run_2', 'run-queued'));
      await store().insertRun(finishedRun('run_3', { delivered_at: null, suppressed: true }), eventFixture('run_3', 'run-queued'));
      await store().insertRun(finishedRun('run_4', null), eventFixture('run_4', 'run-queued'));
      const result = await store().commitMessage(
        delivery({ session_id: 'ses_1', content: 'all', created_at: at, run_ids: ['run_1', 'run_2', 'run_3', 'run_4', 'run_x'], delivered_at: at }),
      );
      expect(result).toEqual({ message: null, runs: [], refused: ['run_2', 'run_3', 'run_4', 'run_x'] });
      expect(await store().listMessages('ses_1')).toEqual([]);
      expect((await store().getRun('run_1'))?.notification).toEqual(pending);
      expect((await store().listRunEvents('run_1')).map((event) => event.type)).toEqual(['run-queued']);
      // Delivered once, a second delivery of the same run is refused: never announced twice.
      expect(
        (await store().commitMessage(delivery({ session_id: 'ses_1', content: 'one', created_at: at, run_ids: ['run_1'], delivered_at: at }))).refused,
      ).toEqual([]);
      expect(
        (await store().commitMessage(delivery({ session_id: 'ses_1', content: 'one', created_at: at, run_ids: ['run_1'], delivered_at: at }))).refused,
      ).toEqual(['run_1']);
      expect(await store().listMessages('ses_1')).toHaveLength(1);
    });

    it('lists the runs whose notification is pending, and those whose is not', async () => {
      await store().insertRun(finishedRun('run_1'), eventFixture('run_1', 'run-queued'));
      await store().insertRun(finishedRun('run_2', { delivered_at: at, suppressed: false }), eventFixture('run_2', 'run-queued'));
      await store().insertRun(finishedRun('run_3', null), eventFixture('run_3', 'run-queued'));
      await store().insertRun({ ...finishedRun('run_4'), parent_session_id: 'ses_2' }, eventFixture('run_4', 'run-queued'));
      expect((await store().listRuns({ notification_pending: true, order: 'oldest' })).map((run) => run.id)).toEqual(['run_1', 'run_4']);
      expect((await store().listRuns({ notification_pending: true, parent_session_id: 'ses_2' })).map((run) => run.id)).toEqual(['run_4']);
      expect((await store().listRuns({ notification_pending: false, order: 'oldest' })).map((run) => run.id)).toEqual(['run_2', 'run_3']);
    });

    it('writes the fields a transition computes from the run as it stands, with the move', async () => {
      await store().insertRun(runFixture({ status: 'running' }), eventFixture('run_1', 'run-start'));
      await store().updateRun('run_1', { mode: 'background' });
      const seen: string[] = [];
      const moved = await store().transitionRun({
        id: 'run_1',
        from: ['running'],
        to: 'completed',
        patch: { ended_at: at, lease_owner: null },
        patchFor: (current) => {
          seen.push(`${current.status} ${current.mode}`);
          return current.mode === 'background' ? { notification: pending, lease_owner: 'kept' } : {};
        },
        event: eventFixture('run_1', 'run-end'),
      });
      expect(seen).toEqual(['running background']);
      expect(moved).toMatchObject({ status: 'completed', ended_at: at, notification: pending, lease_owner: 'kept' });
      expect(await store().getRun('run_1')).toMatchObject({ notification: pending, lease_owner: 'kept' });
      const refused = await store().transitionRun({
        id: 'run_1',
        from: ['running'],
        to: 'failed',
        patchFor: () => ({ turns: 9 }),
        event: eventFixture('run_1', 'run-end'),
      });
      expect(refused).toBeNull();
      expect((await store().getRun('run_1'))?.turns).toBe(0);
    });
  });
}

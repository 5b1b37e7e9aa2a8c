import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNotifier } from '../sessions/notifier.ts';
import { createSessionInbox } from '../sessions/session-inbox.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { eventFixture, runFixture } from '../store/store-fixtures.ts';
import type { Store } from '../store/store.ts';
import { systemNow } from '../util/clock.ts';
import { deliverPendingNotifications } from './deliver-pending-notifications.ts';

const deadOwner = `${hostname()}:${spawnSync(process.execPath, ['-e', '']).pid}:gone`;
const liveOwner = `${hostname()}:${process.pid}:other`;

/** One recovery, as a fresh process runs it: its own notifier and owner id. */
function recover(store: Store, ownerId = `${hostname()}:${process.pid}:me`) {
  const notifier = createNotifier({
    store,
    inbox: createSessionInbox(),
    now: systemNow,
    onError: (error) => {
      throw error;
    },
  });
  return deliverPendingNotifications({ store, notifier, ownerId, now: systemNow, leaseMs: 15_000 });
}

async function pendingRun(store: Store, id: string, owner: string | null, endedAt = new Date().toISOString()) {
  const run = runFixture({
    id,
    mode: 'background',
    status: 'completed',
    ended_at: endedAt,
    lease_owner: owner,
    notification: { delivered_at: null, suppressed: false },
  });
  await store.insertRun(run, eventFixture(id, 'run-queued'));
}

const announced = async (store: Store) =>
  (await store.listMessages('ses_1')).flatMap((message) => [...String(message.content).matchAll(/run_id: (\S+)/g)].map((match) => match[1]));

describe('deliverPendingNotifications', () => {
  it('delivers a notification pending when its process died exactly once, and a second recovery adds nothing', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'cadre-recover-')), 'cadre.db');
    const crashed = createSqliteStore({ path });
    await pendingRun(crashed, 'run_1', deadOwner);
    await pendingRun(crashed, 'run_2', null);
    await crashed.close();

    const first = createSqliteStore({ path });
    expect((await recover(first)).sort()).toEqual(['run_1', 'run_2']);
    await first.close();
    const second = createSqliteStore({ path });
    expect(await recover(second)).toEqual([]);
    expect((await announced(second)).sort()).toEqual(['run_1', 'run_2']);
    // Both runs came together: one message.
    expect(await second.listMessages('ses_1')).toHaveLength(1);
    expect((await second.getRun('run_1'))?.notification?.delivered_at).toBeTypeOf('string');
    await second.close();
  });

  it('leaves a notification to the live process on this host that is delivering it, and delivers its own', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await pendingRun(store, 'run_live', liveOwner);
    await pendingRun(store, 'run_mine', `${hostname()}:${process.pid}:me`);
    expect(await recover(store)).toEqual(['run_mine']);
    expect((await store.listRuns({ notification_pending: true })).map((run) => run.id)).toEqual(['run_live']);
    await store.close();
  });

  it('presumes a process of another host gone once its run ended more than a lease ago', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await pendingRun(store, 'run_recent', 'elsewhere:12:tag');
    await pendingRun(store, 'run_old', 'elsewhere:12:tag', new Date(Date.now() - 60_000).toISOString());
    expect(await recover(store)).toEqual(['run_old']);
    await store.close();
  });
});

describe('waitForIdle of the runtime', () => {
  it('delivers, before the session counts as idle, a notification a dead process owed it (a run that ended on a worker for a dead host), and auto-resumes on it', async () => {
    const { createCadre } = await import('./create-cadre.ts');
    const { scriptedLanguageModel } = await import('../testing/index.ts');
    const store = createSqliteStore({ path: ':memory:' });
    const cadre = createCadre({
      store,
      model: scriptedLanguageModel([{ when: { last_user_includes: '<subagent-notification>' }, turns: [{ text: 'Noted.' }] }, { turns: [{ text: 'Hello.' }] }]),
    });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'Hi');
    // The run ended elsewhere after this process recovered the session; its holder is dead.
    await store.insertRun(
      runFixture({
        id: 'run_1',
        parent_session_id: session.id,
        mode: 'background',
        status: 'completed',
        ended_at: systemNow(),
        lease_owner: deadOwner,
        notification: { delivered_at: null, suppressed: false },
      }),
      eventFixture('run_1', 'run-queued'),
    );
    await cadre.waitForIdle(session.id);
    const messages = await store.listMessages(session.id);
    expect(messages.filter((message) => String(message.content).includes('run_id: run_1'))).toHaveLength(1);
    expect(messages.at(-1)).toMatchObject({ role: 'assistant' });
    expect((await store.getRun('run_1'))?.notification?.delivered_at).toBeTypeOf('string');
    await cadre.close();
  });
});

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRunBus } from '../runs/run-bus.ts';
import { createRunLedger, type RunLedger } from '../runs/run-ledger.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { runFixture } from '../store/store-fixtures.ts';
import type { RunMode, RunStatus } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { systemNow } from '../util/clock.ts';
import { createNotifier } from './notifier.ts';
import { createSessionInbox, takeAndStore } from './session-inbox.ts';

function setup(store: Store = createSqliteStore({ path: ':memory:' })) {
  const bus = createRunBus();
  const ledger = createRunLedger({ store, bus, now: systemNow });
  const inbox = createSessionInbox();
  const delivered: string[] = [];
  bus.subscribe((event) => {
    if (event.type === 'run-event' && event.event.type === 'notification-deliver') delivered.push(event.run.id);
  });
  const notifier = createNotifier({ store, bus, inbox, now: systemNow, onError: (error) => { throw error; } });
  return { store, ledger, inbox, notifier, delivered };
}

/** Runs a run through the ledger to its end, as the run manager does. */
async function endRun(ledger: RunLedger, id: string, { mode = 'background', to = 'completed', owner = 'host:1:owner' }: { mode?: RunMode; to?: RunStatus; owner?: string } = {}) {
  await ledger.insert(runFixture({ id, mode, lease_owner: owner }));
  await ledger.transition(id, 'running');
  return (await ledger.transition(id, to, { result: { text: `Result of ${id}`, truncated: false, original_length: 12 } }))!;
}

const notificationsOf = async (store: Store) =>
  (await store.listMessages('ses_1')).filter((message) => String(message.content).startsWith('<subagent-notification>'));

describe('notifier', () => {
  it('stores the notification pending with the run end, and only marks it delivered when the parent loop takes the message', async () => {
    const { store, ledger, inbox, notifier, delivered } = setup();
    inbox.open('ses_1');
    const run = await endRun(ledger, 'run_1');
    expect(run.notification).toEqual({ delivered_at: null, suppressed: false });
    const delivering = notifier.runFinished(run);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Mid-turn: the message waits for the next model call; the store still says pending.
    expect(await notificationsOf(store)).toEqual([]);
    expect((await store.getRun('run_1'))?.notification).toEqual({ delivered_at: null, suppressed: false });
    expect(notifier.pending('ses_1')).toBe(1);

    const [message] = await takeAndStore(inbox, 'ses_1');
    await delivering;
    expect(String(message.content)).toContain('run_id: run_1');
    expect((await notificationsOf(store)).map((stored) => stored.content)).toEqual([message.content]);
    expect((await store.getRun('run_1'))?.notification?.delivered_at).toBeTypeOf('string');
    expect(delivered).toEqual(['run_1']);
    expect(notifier.pending('ses_1')).toBe(0);
  });

  it('keeps a notification pending across a crash while it waits for the parent loop (the store closes without the delivery)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'cadre-notifier-')), 'cadre.db');
    const { store, ledger, inbox, notifier } = setup(createSqliteStore({ path }));
    inbox.open('ses_1');
    void notifier.runFinished(await endRun(ledger, 'run_1'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The process dies here: whatever is committed is all there is.
    await store.close();
    const after = createSqliteStore({ path });
    expect(await notificationsOf(after)).toEqual([]);
    expect((await after.listRuns({ notification_pending: true })).map((run) => run.id)).toEqual(['run_1']);
    await after.close();
  });

  it('stores the message at once for an idle parent, and coalesces notifications that come within 250 ms', async () => {
    const { store, ledger, notifier, delivered } = setup();
    const first = await endRun(ledger, 'run_1');
    const second = await endRun(ledger, 'run_2');
    await Promise.all([notifier.runFinished(first), notifier.runFinished(second)]);
    const messages = await notificationsOf(store);
    expect(messages).toHaveLength(1);
    expect(String(messages[0].content)).toMatch(/run_id: run_1[\s\S]*run_id: run_2/);
    expect(delivered.sort()).toEqual(['run_1', 'run_2']);
    expect(await store.listRuns({ notification_pending: true })).toEqual([]);
  });

  it('sends none for a foreground run or one canceled by its parent (suppressed), and none twice', async () => {
    const { store, ledger, notifier } = setup();
    const foreground = await endRun(ledger, 'run_1', { mode: 'foreground' });
    const canceled = await endRun(ledger, 'run_2', { to: 'canceled_by_parent' });
    expect(foreground.notification).toBeNull();
    expect(canceled.notification).toEqual({ delivered_at: null, suppressed: true });
    const run = await endRun(ledger, 'run_3');
    await Promise.all([notifier.runFinished(foreground), notifier.runFinished(canceled), notifier.runFinished(run), notifier.runFinished(run)]);
    await notifier.runFinished(run);
    const messages = await notificationsOf(store);
    expect(messages.map((message) => [...String(message.content).matchAll(/run_id: (\S+)/g)].map((match) => match[1]))).toEqual([['run_3']]);
  });

  it('announces a run once when two processes deliver its notification at the same time', async () => {
    const { store, ledger, notifier } = setup();
    const other = createNotifier({ store, inbox: createSessionInbox(), now: systemNow, onError: (error) => { throw error; } });
    const run = await endRun(ledger, 'run_1');
    await Promise.all([notifier.runFinished(run), other.runFinished(run)]);
    expect(await notificationsOf(store)).toHaveLength(1);
  });

  it('drops a message from the parent loop when every run in it was delivered elsewhere meanwhile', async () => {
    const { store, ledger, inbox, notifier } = setup();
    inbox.open('ses_1');
    const run = await endRun(ledger, 'run_1');
    const delivering = notifier.runFinished(run);
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Another process (a recovery) got there first.
    await createNotifier({ store, inbox: createSessionInbox(), now: systemNow }).runFinished(run);
    expect(await takeAndStore(inbox, 'ses_1')).toEqual([]);
    await delivering;
    expect(await notificationsOf(store)).toHaveLength(1);
  });
});

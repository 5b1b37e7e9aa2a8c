import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { vi } from 'vitest';
import { createRunBus, type CadreEvent } from '../runs/run-bus.ts';
import { createRunLedger, type RunLedger } from '../runs/run-ledger.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { runFixture } from '../store/store-fixtures.ts';
import type { RunMode, RunStatus } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { systemNow } from '../util/clock.ts';
import { createNotifier, deliveryOf, type NotifierOptions } from './notifier.ts';
import { renderNotification } from './render-notification.ts';
import { createSessionInbox, takeAndStore, type InboxEntry, type SessionInbox } from './session-inbox.ts';

/** A clock the test moves by hand. */
function manualClock(start = '2026-01-01T00:00:00.000Z') {
  let at = Date.parse(start);
  return { now: () => new Date(at).toISOString(), advance: (ms: number) => (at += ms) };
}

/** Resolves with the next entry put in the session inbox: a notification waits for the parent loop. */
function nextPut(inbox: SessionInbox): Promise<InboxEntry> {
  const put = inbox.put.bind(inbox);
  return new Promise((resolve) => {
    inbox.put = (sessionId, entry) => {
      put(sessionId, entry);
      inbox.put = put;
      resolve(entry);
    };
  });
}

function setup(store: Store = createSqliteStore({ path: ':memory:' }), options: Partial<NotifierOptions> = {}) {
  const bus = createRunBus();
  const clock = manualClock();
  const ledger = createRunLedger({ store, bus, now: clock.now });
  const inbox = createSessionInbox();
  const delivered: string[] = [];
  const events: CadreEvent[] = [];
  bus.subscribe((event) => {
    events.push(event);
    if (event.type === 'run-event' && event.event.type === 'notification-deliver') delivered.push(event.run.id);
  });
  const errors: unknown[] = [];
  const idle: string[] = [];
  const notifier = createNotifier({
    store,
    bus,
    inbox,
    now: clock.now,
    onError: (error) => errors.push(error),
    onDelivered: (sessionId) => idle.push(sessionId),
    ...options,
  });
  return { store, ledger, inbox, notifier, delivered, events, errors, idle, clock };
}

/** Runs a run through the ledger to its end, as the run manager does. */
async function endRun(
  ledger: RunLedger,
  id: string,
  { mode = 'background', to = 'completed', owner = 'host:1:owner' }: { mode?: RunMode; to?: RunStatus; owner?: string } = {},
) {
  await ledger.insert(runFixture({ id, mode, lease_owner: owner }));
  await ledger.transition(id, 'running');
  return (await ledger.transition(id, to, { result: { text: `Result of ${id}`, truncated: false, original_length: 12 } }))!;
}

const notificationsOf = async (store: Store) =>
  (await store.listMessages('ses_1')).filter((message) => String(message.content).startsWith('<subagent-notification>'));

describe('notifier', () => {
  it('stores the notification pending with the run end, and only marks it delivered when the parent loop takes the message', async () => {
    const { store, ledger, inbox, notifier, delivered, idle } = setup();
    inbox.open('ses_1');
    const run = await endRun(ledger, 'run_1');
    expect(run.notification).toEqual({ delivered_at: null, suppressed: false });
    const put = nextPut(inbox);
    const delivering = notifier.runFinished(run);
    await put;
    expect(notifier.holds('run_1')).toBe(true);
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
    expect(notifier.holds('run_1')).toBe(false);
    // The running loop answers it: nothing needs to wake the session.
    expect(idle).toEqual([]);
  });

  it('keeps a notification pending across a crash while it waits for the parent loop (the store closes without the delivery)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'cadre-notifier-')), 'cadre.db');
    const { store, ledger, inbox, notifier } = setup(createSqliteStore({ path }));
    inbox.open('ses_1');
    const put = nextPut(inbox);
    void notifier.runFinished(await endRun(ledger, 'run_1'));
    await put;
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
    const other = createNotifier({
      store,
      inbox: createSessionInbox(),
      now: systemNow,
      onError: (error) => {
        throw error;
      },
    });
    const run = await endRun(ledger, 'run_1');
    await Promise.all([notifier.runFinished(run), other.runFinished(run)]);
    expect(await notificationsOf(store)).toHaveLength(1);
  });

  it('drops a message from the parent loop when every run in it was delivered elsewhere meanwhile', async () => {
    const { store, ledger, inbox, notifier } = setup();
    inbox.open('ses_1');
    const run = await endRun(ledger, 'run_1');
    const put = nextPut(inbox);
    const delivering = notifier.runFinished(run);
    await put;
    // Another process (a recovery) got there first.
    await createNotifier({ store, inbox: createSessionInbox(), now: systemNow }).runFinished(run);
    expect(await takeAndStore(inbox, 'ses_1')).toEqual([]);
    await delivering;
    expect(await notificationsOf(store)).toHaveLength(1);
  });

  it('joins a notification to the open message up to 250 ms after it, and starts a new one after that', async () => {
    const { store, ledger, notifier, clock, errors } = setup();
    const [first, second, third] = [await endRun(ledger, 'run_1'), await endRun(ledger, 'run_2'), await endRun(ledger, 'run_3')];
    await notifier.runFinished(first);
    clock.advance(250);
    await notifier.runFinished(second);
    clock.advance(1);
    await notifier.runFinished(third);
    const messages = await notificationsOf(store);
    expect(messages.map((message) => message.content)).toEqual([renderNotification([first, second]), renderNotification([third])]);
    expect(errors).toEqual([]);
  });

  it('takes its coalescing window from the options', async () => {
    const { store, ledger, notifier, clock } = setup(undefined, { coalesceMs: 10 });
    await notifier.runFinished(await endRun(ledger, 'run_1'));
    clock.advance(11);
    await notifier.runFinished(await endRun(ledger, 'run_2'));
    expect(await notificationsOf(store)).toHaveLength(2);
  });

  it('never rewrites a message a turn may have read: once the parent runs, a notification gets its own message', async () => {
    const { store, ledger, inbox, notifier } = setup();
    const first = await endRun(ledger, 'run_1');
    await notifier.runFinished(first);
    const [stored] = await notificationsOf(store);
    // A turn starts and reads the transcript, the first notification with it.
    inbox.open('ses_1');
    const put = nextPut(inbox);
    const second = await endRun(ledger, 'run_2');
    const delivering = notifier.runFinished(second);
    expect((await put).message.content).toBe(renderNotification([second]));
    expect((await notificationsOf(store))[0]).toEqual(stored);
    await takeAndStore(inbox, 'ses_1');
    await delivering;
    expect((await notificationsOf(store)).map((message) => message.content)).toEqual([renderNotification([first]), renderNotification([second])]);
  });

  it('never joins a message the parent loop already took, and joins one still waiting in its inbox', async () => {
    const { store, ledger, inbox, notifier } = setup();
    inbox.open('ses_1');
    const put = nextPut(inbox);
    const first = notifier.runFinished(await endRun(ledger, 'run_1'));
    const waiting = await put;
    // Still waiting: the second one joins it.
    const second = notifier.runFinished(await endRun(ledger, 'run_2'));
    await vi.waitFor(() => expect(String(waiting.message.content)).toContain('run_id: run_2'));
    const [taken] = await takeAndStore(inbox, 'ses_1');
    await Promise.all([first, second]);
    expect(String(taken.content)).toMatch(/run_id: run_1[\s\S]*run_id: run_2/);
    // Taken by a model call: the third waits for the next one.
    const again = nextPut(inbox);
    const third = notifier.runFinished(await endRun(ledger, 'run_3'));
    await again;
    const [next] = await takeAndStore(inbox, 'ses_1');
    await third;
    expect(String(next.content)).toContain('run_id: run_3');
    expect(String(next.content)).not.toContain('run_id: run_1');
    const stored = await notificationsOf(store);
    expect(stored.map((message) => message.content)).toEqual([taken.content, next.content]);
  });

  it('leaves out of its message a run another process announced meanwhile, and announces the rest', async () => {
    const { store, ledger, notifier, delivered } = setup();
    const [first, second] = [await endRun(ledger, 'run_1'), await endRun(ledger, 'run_2')];
    await createNotifier({ store, inbox: createSessionInbox(), now: systemNow }).runFinished(first);
    // This process still holds run_1 as it stood before: pending.
    await Promise.all([notifier.runFinished(first), notifier.runFinished(second)]);
    const messages = await notificationsOf(store);
    expect(messages.map((message) => message.content)).toEqual([renderNotification([first]), renderNotification([second])]);
    expect(delivered).toEqual(['run_2']);
  });

  it('leaves out of a message waiting for the parent loop a run another process announced meanwhile', async () => {
    const { store, ledger, inbox, notifier, delivered } = setup();
    inbox.open('ses_1');
    const [first, second] = [await endRun(ledger, 'run_1'), await endRun(ledger, 'run_2')];
    const put = nextPut(inbox);
    const deliveries = [notifier.runFinished(first), notifier.runFinished(second)];
    const waiting = await put;
    expect(waiting.message.role).toBe('user');
    await vi.waitFor(() => expect(String(waiting.message.content)).toContain('run_id: run_2'));
    // Another process (a recovery) announces run_1 before the loop takes the message.
    await createNotifier({ store, inbox: createSessionInbox(), now: systemNow }).runFinished(first);
    const [taken] = await takeAndStore(inbox, 'ses_1');
    await Promise.all(deliveries);
    expect(taken.content).toBe(renderNotification([second]));
    expect((await notificationsOf(store)).map((message) => message.content)).toEqual([renderNotification([first]), renderNotification([second])]);
    expect(delivered).toEqual(['run_2']);
  });

  it('announces the stored message and each delivery, and marks the run delivered with its lease given up', async () => {
    const { store, ledger, notifier, events, clock } = setup();
    const run = await endRun(ledger, 'run_1');
    events.length = 0;
    await notifier.runFinished(run);
    const [message] = await notificationsOf(store);
    expect(message).toMatchObject({ role: 'user', content: renderNotification([run]), created_at: clock.now() });
    expect(events.map((event) => event.type)).toEqual(['message', 'run-event']);
    expect(events[0]).toEqual({ type: 'message', message });
    expect(events[1]).toMatchObject({
      type: 'run-event',
      run: { id: 'run_1' },
      event: { type: 'notification-deliver', at: clock.now(), data: { session_id: 'ses_1', message_seq: message.seq } },
    });
    expect(await store.getRun('run_1')).toMatchObject({
      notification: { delivered_at: clock.now(), suppressed: false },
      lease_owner: null,
      lease_expires_at: null,
    });
  });

  it('wakes an idle parent once its message is stored', async () => {
    const { ledger, notifier, idle } = setup();
    await notifier.runFinished(await endRun(ledger, 'run_1'));
    expect(idle).toEqual(['ses_1']);
  });

  it("leaves a session's notifications pending for an app's own loop, and delivers them when asking fails", async () => {
    const asked: string[] = [];
    const leaving = setup(undefined, { leavesPending: async (sessionId) => (asked.push(sessionId), true) });
    await leaving.notifier.runFinished(await endRun(leaving.ledger, 'run_1'));
    expect(asked).toEqual(['ses_1']);
    expect(await notificationsOf(leaving.store)).toEqual([]);
    expect((await leaving.store.getRun('run_1'))?.notification?.delivered_at).toBeNull();

    const failing = setup(undefined, { leavesPending: async () => Promise.reject(new Error('cannot tell')) });
    await failing.notifier.runFinished(await endRun(failing.ledger, 'run_1'));
    expect(failing.errors).toEqual([new Error('cannot tell')]);
    expect(await notificationsOf(failing.store)).toHaveLength(1);
  });

  it('reports a delivery the store refused, and lets go of the run', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const { ledger, notifier, errors, idle } = setup(store);
    const run = await endRun(ledger, 'run_1');
    store.commitMessage = () => Promise.reject(new Error('disk full'));
    await notifier.runFinished(run);
    expect(errors).toEqual([new Error('disk full')]);
    expect(notifier.pending('ses_1')).toBe(0);
    expect(notifier.holds('run_1')).toBe(false);
    expect(idle).toEqual([]);
  });

  it('counts the deliveries under way per session', async () => {
    const { ledger, inbox, notifier } = setup();
    inbox.open('ses_1');
    const put = nextPut(inbox);
    const [first, second] = [await endRun(ledger, 'run_1'), await endRun(ledger, 'run_2')];
    const deliveries = [notifier.runFinished(first), notifier.runFinished(second)];
    await put;
    await vi.waitFor(() => expect(notifier.pending('ses_1')).toBe(2));
    expect(notifier.pending('ses_2')).toBe(0);
    await takeAndStore(inbox, 'ses_1');
    await deliveries[0];
    await deliveries[1];
    expect(notifier.pending('ses_1')).toBe(0);
  });

  it('announces a run once when a second look, with the record read before the first delivery, asks again while the message is open', async () => {
    const { store, ledger, notifier } = setup();
    const stale = await endRun(ledger, 'run_1');
    await notifier.runFinished(stale);
    // A recovery sweep read the run while it was still pending; a later run joins the same message.
    await notifier.runFinished(stale);
    await notifier.runFinished(await endRun(ledger, 'run_2'));
    const [message, ...more] = await notificationsOf(store);
    expect(more).toEqual([]);
    expect([...String(message.content).matchAll(/^run_id: (\S+)$/gm)].map((match) => match[1])).toEqual(['run_1', 'run_2']);
  });
});

describe('deliveryOf', () => {
  it('appends a new message, or rewrites the open one, and marks each fresh run delivered', () => {
    const run = runFixture({ id: 'run_9', mode: 'background', status: 'completed', notification: { delivered_at: null, suppressed: false } });
    const appended = deliveryOf({ sessionId: 'ses_1', seq: null }, [run], 'text', '2026-01-01T00:00:00.000Z');
    expect(appended).toMatchObject({ session_id: 'ses_1', seq: undefined, role: 'user', content: 'text', created_at: '2026-01-01T00:00:00.000Z' });
    expect(deliveryOf({ sessionId: 'ses_1', seq: 7 }, [run], 'text', 'at').seq).toBe(7);
    const [change] = appended.runs;
    expect(change.id).toBe('run_9');
    expect(change.check(run)).toBe(true);
    expect(change.check({ ...run, notification: { delivered_at: 'x', suppressed: false } })).toBe(false);
    expect(change.patch).toEqual({ notification: { delivered_at: '2026-01-01T00:00:00.000Z', suppressed: false }, lease_owner: null, lease_expires_at: null });
  });
});

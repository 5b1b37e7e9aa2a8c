import { describe, expect, it } from 'vitest';
import type { CoordinationSignal } from '../coordination/coordination.ts';
import { runStatuses, type RunRecord, type RunStatus } from '../store/records.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { runFixture } from '../store/store-fixtures.ts';
import { createRunBus, type CadreEvent } from './run-bus.ts';
import { canMove, createRunLedger, legalMoves } from './run-ledger.ts';

const startedAt = '2026-01-01T00:00:05.000Z';

function setup() {
  const store = createSqliteStore({ path: ':memory:' });
  const bus = createRunBus({
    onListenerError: (error) => {
      throw error;
    },
  });
  const events: CadreEvent[] = [];
  bus.subscribe((event) => events.push(event));
  const signals: CoordinationSignal[] = [];
  const coordination = { publish: (signal: CoordinationSignal) => signals.push(signal), subscribe: () => () => {}, close: async () => {} };
  let clock = Date.parse(startedAt);
  const now = () => new Date((clock += 1000)).toISOString();
  const ledger = createRunLedger({ store, bus, now, coordination });
  /** The run events announced live, as [type, data, seq]. */
  const announced = () =>
    events.flatMap((event) => (event.type === 'run-event' ? [[event.event.type, event.event.data, 'seq' in event.event ? event.event.seq : undefined]] : []));
  return { store, ledger, events, signals, announced };
}

const leased = (overrides: Partial<RunRecord> = {}) => runFixture({ lease_owner: 'host:1:owner', lease_expires_at: '2026-01-01T00:01:00.000Z', ...overrides });

describe('legal moves', () => {
  it('lets a queued run start or end unstarted, a running run end, and a finished run go nowhere', () => {
    expect(canMove('queued', 'running')).toBe(true);
    expect(canMove('queued', 'abandoned')).toBe(true);
    expect(canMove('queued', 'completed')).toBe(false);
    expect(canMove('running', 'completed_empty')).toBe(true);
    expect(canMove('running', 'queued')).toBe(false);
    expect(canMove('running', 'running')).toBe(false);
    for (const from of ['completed', 'completed_empty', 'failed', 'canceled_by_user', 'canceled_by_parent', 'abandoned'] as RunStatus[]) {
      expect(legalMoves[from]).toEqual([]);
      for (const to of runStatuses) expect(canMove(from, to)).toBe(false);
    }
  });
});

describe('RunLedger.insert', () => {
  it('stores a queued run with its run-queued event and announces it', async () => {
    const { store, ledger, announced } = setup();
    const run = runFixture({ mode: 'background' });
    expect(await ledger.insert(run)).toBe(run);
    expect(await store.getRun('run_1')).toEqual(run);
    expect(await store.listRunEvents('run_1')).toEqual([{ run_id: 'run_1', seq: 1, at: run.created_at, type: 'run-queued', data: { mode: 'background' } }]);
    expect(announced()).toEqual([['run-queued', { mode: 'background' }, 1]]);
  });

  it('refuses a new run in any state but queued, storing nothing', async () => {
    const { store, ledger, events } = setup();
    for (const status of runStatuses.filter((status) => status !== 'queued')) {
      await expect(ledger.insert(runFixture({ status }))).rejects.toThrow(`A new run starts queued, not ${status}`);
    }
    expect(await store.getRun('run_1')).toBeNull();
    expect(events).toEqual([]);
  });
});

describe('RunLedger.transition', () => {
  it('starts a run: started_at and a run-start event, no ended_at, the lease kept', async () => {
    const { store, ledger, announced, signals } = setup();
    await ledger.insert(leased());
    const run = await ledger.transition('run_1', 'running', {}, { attempt: 1 });
    expect(run).toMatchObject({
      status: 'running',
      started_at: '2026-01-01T00:00:06.000Z',
      ended_at: null,
      lease_owner: 'host:1:owner',
      lease_expires_at: '2026-01-01T00:01:00.000Z',
    });
    expect(await store.getRun('run_1')).toEqual(run);
    expect((await store.listRunEvents('run_1')).at(-1)).toMatchObject({ type: 'run-start', at: '2026-01-01T00:00:06.000Z', data: { attempt: 1 }, seq: 2 });
    expect(announced().at(-1)).toEqual(['run-start', { attempt: 1 }, 2]);
    expect(signals).toEqual([]);
  });

  it('keeps a start time the caller gives', async () => {
    const { ledger } = setup();
    await ledger.insert(runFixture());
    expect(await ledger.transition('run_1', 'running', { started_at: '2020-01-01T00:00:00.000Z' })).toMatchObject({ started_at: '2020-01-01T00:00:00.000Z' });
  });

  it('ends a foreground run: ended_at, no lease, a run-end event with the status, and no notification', async () => {
    const { store, ledger, announced, signals } = setup();
    await ledger.insert(leased());
    await ledger.transition('run_1', 'running');
    const run = await ledger.transition('run_1', 'failed', { error: { kind: 'model_error', message: 'boom' } }, { reason: 'model' });
    expect(run).toMatchObject({
      status: 'failed',
      started_at: '2026-01-01T00:00:06.000Z',
      ended_at: '2026-01-01T00:00:07.000Z',
      lease_owner: null,
      lease_expires_at: null,
      notification: null,
      error: { kind: 'model_error', message: 'boom' },
    });
    expect(await store.getRun('run_1')).toEqual(run);
    expect(announced().at(-1)).toEqual(['run-end', { status: 'failed', reason: 'model' }, 3]);
    expect(signals).toEqual([{ type: 'run-ended', run_id: 'run_1', parent_session_id: 'ses_1', status: 'failed' }]);
  });

  it('keeps an end time the caller gives', async () => {
    const { ledger } = setup();
    await ledger.insert(runFixture());
    expect(await ledger.transition('run_1', 'abandoned', { ended_at: '2020-01-01T00:00:00.000Z' })).toMatchObject({
      ended_at: '2020-01-01T00:00:00.000Z',
      started_at: null,
    });
  });

  it('ends a background run with its notification pending, its owner kept for recovery, and says so to other processes', async () => {
    const { ledger, signals } = setup();
    await ledger.insert(leased({ mode: 'background' }));
    await ledger.transition('run_1', 'running');
    const run = await ledger.transition('run_1', 'completed');
    expect(run).toMatchObject({ notification: { delivered_at: null, suppressed: false }, lease_owner: 'host:1:owner', lease_expires_at: null });
    expect(signals).toEqual([
      { type: 'run-ended', run_id: 'run_1', parent_session_id: 'ses_1', status: 'completed' },
      { type: 'notification-pending', run_id: 'run_1', parent_session_id: 'ses_1' },
    ]);
  });

  it("holds a pending notification in the name of the process that delivers it, when the caller names one (a job's host)", async () => {
    const { ledger } = setup();
    await ledger.insert(leased({ mode: 'background' }));
    await ledger.transition('run_1', 'running');
    const run = await ledger.transition('run_1', 'completed', {}, {}, 'host:2:sender');
    expect(run).toMatchObject({ notification: { delivered_at: null, suppressed: false }, lease_owner: 'host:2:sender', lease_expires_at: null });
  });

  it('suppresses the notification of a background run its parent canceled', async () => {
    const { ledger, signals } = setup();
    await ledger.insert(leased({ mode: 'background' }));
    const run = await ledger.transition('run_1', 'canceled_by_parent');
    expect(run).toMatchObject({ notification: { delivered_at: null, suppressed: true }, lease_owner: null });
    expect(signals.map((signal) => signal.type)).toEqual(['run-ended']);
  });

  it('decides the notification on the run as it stands at the move (promoted meanwhile)', async () => {
    const { store, ledger } = setup();
    await ledger.insert(leased());
    await ledger.transition('run_1', 'running');
    await store.updateRun('run_1', { mode: 'background' });
    expect(await ledger.transition('run_1', 'completed')).toMatchObject({ notification: { delivered_at: null, suppressed: false } });
  });

  it('writes nothing and returns null for a move the run cannot make now', async () => {
    const { store, ledger, events, signals } = setup();
    await ledger.insert(runFixture());
    await ledger.transition('run_1', 'running');
    await ledger.transition('run_1', 'completed');
    const before = await store.listRunEvents('run_1');
    events.length = 0;
    expect(await ledger.transition('run_1', 'failed')).toBeNull();
    expect(await ledger.transition('run_1', 'running')).toBeNull();
    expect(await ledger.transition('run_nope', 'running')).toBeNull();
    expect(await store.listRunEvents('run_1')).toEqual(before);
    expect((await store.getRun('run_1'))?.status).toBe('completed');
    expect(events).toEqual([]);
    expect(signals.filter((signal) => signal.type === 'run-ended')).toHaveLength(1);
  });

  it('refuses a move to a state nothing moves to', async () => {
    const { ledger } = setup();
    await ledger.insert(runFixture());
    await expect(ledger.transition('run_1', 'queued')).rejects.toThrow('No state moves to queued');
  });

  it('works without coordination', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const ledger = createRunLedger({ store, bus: createRunBus(), now: () => startedAt });
    await ledger.insert(runFixture({ mode: 'background' }));
    expect(await ledger.transition('run_1', 'canceled_by_user')).toMatchObject({ status: 'canceled_by_user', ended_at: startedAt });
  });
});

describe('RunLedger.promote', () => {
  it('makes an active foreground run background, with promoted_at and a warning, so its end leaves a pending notification', async () => {
    const { store, ledger, announced } = setup();
    await ledger.insert(leased());
    await ledger.transition('run_1', 'running');
    const promoted = await ledger.promote('run_1', 'caller_gone');
    expect(promoted).toMatchObject({
      status: 'running',
      mode: 'background',
      promoted_at: expect.any(String),
      warnings: [{ kind: 'caller_gone', at: promoted?.promoted_at }],
    });
    expect(announced().at(-1)).toEqual(['warning', { kind: 'caller_gone' }, 3]);
    expect((await store.listRunEvents('run_1')).map((event) => event.type)).toEqual(['run-queued', 'run-start', 'warning']);
    expect(await ledger.transition('run_1', 'completed')).toMatchObject({ notification: { delivered_at: null, suppressed: false } });
  });

  it('promotes a queued run and leaves it queued', async () => {
    const { ledger } = setup();
    await ledger.insert(leased());
    expect(await ledger.promote('run_1', 'caller_gone')).toMatchObject({ status: 'queued', mode: 'background' });
  });

  it('leaves a run that already ended as its end decided, and a background run as it is', async () => {
    const { store, ledger } = setup();
    await ledger.insert(leased());
    await ledger.transition('run_1', 'running');
    const ended = await ledger.transition('run_1', 'completed');
    expect(await ledger.promote('run_1', 'caller_gone')).toEqual(ended);
    expect(await store.listRunEvents('run_1')).toHaveLength(3);
    await ledger.insert(leased({ id: 'run_2', mode: 'background' }));
    expect(await ledger.promote('run_2', 'caller_gone')).toMatchObject({ mode: 'background', promoted_at: null, warnings: [] });
    expect(await ledger.promote('run_nope', 'caller_gone')).toBeNull();
  });
});

describe('RunLedger.update', () => {
  it('changes fields without a state move, with an event only when given one', async () => {
    const { store, ledger, announced } = setup();
    await ledger.insert(runFixture());
    const updated = await ledger.update('run_1', { activity: { kind: 'text', text: 'reading' } });
    expect(updated).toMatchObject({ status: 'queued', last_activity: 'reading' });
    expect(await store.listRunEvents('run_1')).toHaveLength(1);
    expect(announced()).toHaveLength(1);
    const warned = await ledger.update('run_1', { mode: 'background' }, { type: 'warning', data: { kind: 'promoted' } });
    expect(warned).toMatchObject({ mode: 'background' });
    expect((await store.listRunEvents('run_1')).at(-1)).toMatchObject({ type: 'warning', data: { kind: 'promoted' }, at: '2026-01-01T00:00:07.000Z', seq: 2 });
    expect(announced().at(-1)).toEqual(['warning', { kind: 'promoted' }, 2]);
    expect(await ledger.update('run_nope', { activity: { kind: 'text', text: 'x' } }, { type: 'warning', data: { kind: 'promoted' } })).toBeNull();
    expect(announced()).toHaveLength(2);
  });
});

describe('RunLedger.record', () => {
  it('stores events (at now unless given) and announces those not announced yet, with the run as it stood', async () => {
    const { store, ledger, events } = setup();
    const run = await ledger.insert(runFixture());
    events.length = 0;
    const earlier = { ...run, last_activity: 'earlier' };
    await ledger.record(run, [
      { type: 'step-start', data: { step: 1 } },
      { type: 'activity', data: { text: 'shown' }, announced: true },
      { type: 'tool-call-start', data: { tool: 'ls' }, at: '2020-01-01T00:00:00.000Z', run: earlier },
    ]);
    expect((await store.listRunEvents('run_1')).slice(1).map(({ type, at, seq }) => [type, at, seq])).toEqual([
      ['step-start', '2026-01-01T00:00:06.000Z', 2],
      ['activity', '2026-01-01T00:00:06.000Z', 3],
      ['tool-call-start', '2020-01-01T00:00:00.000Z', 4],
    ]);
    expect(
      events.map((event) => (event.type === 'run-event' ? [event.event.type, event.run.last_activity, 'seq' in event.event ? event.event.seq : -1] : [])),
    ).toEqual([
      ['step-start', null, 2],
      ['tool-call-start', 'earlier', 4],
    ]);
  });

  it('writes a patch with the events, and nothing at all for an unknown run', async () => {
    const { store, ledger, events } = setup();
    const run = await ledger.insert(runFixture());
    await ledger.record(run, [{ type: 'step-start', data: { step: 1 } }], { turns: 1 });
    expect(await store.getRun('run_1')).toMatchObject({ turns: 1 });
    expect(await store.listRunEvents('run_1')).toHaveLength(2);
    events.length = 0;
    await ledger.record({ ...run, id: 'run_nope' }, [{ type: 'step-start', data: { step: 1 } }], { turns: 1 });
    expect(events).toEqual([]);
    expect(await store.listRunEvents('run_nope')).toEqual([]);
  });
});

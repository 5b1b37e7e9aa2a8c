import { hostname } from 'node:os';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createRunBus, type CadreEvent } from '../runs/run-bus.ts';
import { createRunLedger } from '../runs/run-ledger.ts';
import { RunStopSignal } from '../runs/run-stop.ts';
import type { ApprovalRecord } from '../store/records.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { runFixture } from '../store/store-fixtures.ts';
import type { Store } from '../store/store.ts';
import { systemNow, timeSortedId } from '../util/clock.ts';
import { answerApproval } from './answer-approval.ts';
import { createApprovalBroker, type ApprovalBrokerOptions } from './approval-broker.ts';
import { closeOrphanedApprovals } from './close-orphaned-approvals.ts';

const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function setup(options: Partial<ApprovalBrokerOptions> = {}) {
  const store = createSqliteStore({ path: ':memory:' });
  stores.push(store);
  const bus = createRunBus();
  const events: CadreEvent[] = [];
  bus.subscribe((event) => events.push(event));
  const ledger = createRunLedger({ store, bus, now: systemNow });
  await ledger.insert(runFixture());
  const broker = createApprovalBroker({
    store,
    bus,
    ledger,
    now: systemNow,
    newId: timeSortedId,
    ownerId: 'me',
    timeoutMs: 60_000,
    pollMs: 5,
    mode: 'wait',
    ...options,
  });
  return { store, broker, events };
}

const ask = { sessionId: 'ses_1', runId: 'run_1', agent: 'coder', tool: 'bash', argument: 'npm test', risk: 'exec' as const, summary: 'bash npm test' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function resolveEvents(store: Store) {
  return (await store.listRunEvents('run_1')).filter((event) => event.type === 'approval-resolve');
}

describe('approval broker', () => {
  it('resolves exactly once when people, a second process, a stop and the timeout race', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          person: fc.option(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.constantFrom<'approve' | 'deny'>('approve', 'deny'))),
          secondPerson: fc.option(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.constantFrom<'approve' | 'deny'>('approve', 'deny'))),
          otherProcess: fc.option(fc.integer({ min: 0, max: 12 })),
          stop: fc.option(fc.integer({ min: 0, max: 12 })),
          timeout: fc.integer({ min: 1, max: 14 }),
        }),
        async (plan) => {
          const { store, broker, events } = await setup({ timeoutMs: plan.timeout });
          const controller = new AbortController();
          let settled = 0;
          const request = broker.request(ask, controller.signal).then((approval) => {
            settled++;
            return approval;
          });
          await sleep(0);
          const [pending] = await store.listApprovals({ statuses: ['pending'] });
          const answers: Array<Promise<{ changed: boolean } | null>> = [];
          if (plan.person)
            answers.push(sleep(plan.person[0]).then(() => broker.answer(pending?.id ?? 'none', { decision: plan.person![1] }).catch(() => null)));
          if (plan.secondPerson)
            answers.push(sleep(plan.secondPerson[0]).then(() => broker.answer(pending?.id ?? 'none', { decision: plan.secondPerson![1] }).catch(() => null)));
          if (plan.otherProcess !== null)
            answers.push(
              sleep(plan.otherProcess).then(() => answerApproval(store, pending?.id ?? 'none', { decision: 'approve' }, systemNow).catch(() => null)),
            );
          if (plan.stop !== null) void sleep(plan.stop).then(() => controller.abort(new RunStopSignal('user')));
          const final = await request;
          const results = await Promise.all(answers);
          await sleep(20);
          expect(settled).toBe(1);
          expect(final.status).not.toBe('pending');
          expect(await store.getApproval(final.id)).toEqual(final);
          // The person's answers won at most once, and only if the ask ended by a person.
          const personWins = results.filter((result) => result?.changed).length;
          expect(personWins).toBe(final.resolved_by === 'person' ? 1 : 0);
          expect(await resolveEvents(store)).toHaveLength(1);
          expect(events.filter((event) => event.type === 'approval' && event.approval.status !== 'pending')).toHaveLength(1);
          broker.close();
        },
      ),
      { numRuns: 40 },
    );
  });

  it('shows the approver one ask at a time and aborts its prompt when the ask is answered elsewhere', async () => {
    const shown: Array<{ approval: ApprovalRecord; signal: AbortSignal }> = [];
    const { broker } = await setup({
      mode: 'ask',
      approver: (approval, { signal }) => {
        shown.push({ approval, signal });
        return new Promise(() => {});
      },
    });
    const signal = new AbortController().signal;
    const first = broker.request(ask, signal);
    const second = broker.request({ ...ask, argument: 'npm run lint', summary: 'bash npm run lint' }, signal);
    await sleep(10);
    expect(shown).toHaveLength(1);
    await broker.answer(shown[0].approval.id, { decision: 'deny' });
    expect(await first).toMatchObject({ status: 'denied', resolved_by: 'person' });
    expect(shown[0].signal.aborted).toBe(true);
    await sleep(10);
    expect(shown).toHaveLength(2);
    expect(shown[1].approval.argument).toBe('npm run lint');
    await broker.answer(shown[1].approval.id, { decision: 'approve' });
    expect(await second).toMatchObject({ status: 'approved' });
    broker.close();
  });

  it('denies an ask by no_approver when the approver cannot show it', async () => {
    const { broker } = await setup({
      mode: 'ask',
      onError: () => {},
      approver: async () => {
        throw new Error('the terminal went away');
      },
    });
    expect(await broker.request(ask, new AbortController().signal)).toMatchObject({ status: 'denied', resolved_by: 'no_approver' });
  });

  it('closes an ask of a run that was already stopped without asking anyone', async () => {
    let asked = false;
    const { broker } = await setup({
      mode: 'ask',
      approver: async () => {
        asked = true;
        return { decision: 'approve' };
      },
    });
    const controller = new AbortController();
    controller.abort(new RunStopSignal('parent'));
    expect(await broker.request(ask, controller.signal)).toMatchObject({ status: 'canceled', resolved_by: 'stop' });
    expect(asked).toBe(false);
  });
});

describe('closeOrphanedApprovals', () => {
  it('closes the pending asks of a process that is gone, and leaves the others', async () => {
    const { store } = await setup();
    const base = {
      session_id: 'ses_1',
      run_id: 'run_1',
      agent: 'coder',
      tool: 'bash',
      argument: 'ls',
      risk: 'exec',
      summary: 'bash ls',
      status: 'pending' as const,
      created_at: systemNow(),
      resolved_at: null,
      resolved_by: null,
      always: false,
      preview: null,
    };
    // Pid 2^22 + 1 is above Linux's largest pid, so no process has it.
    await store.insertApproval({ ...base, id: 'apr_dead', owner: `${hostname()}:4194305:x` });
    await store.insertApproval({ ...base, id: 'apr_alive', owner: `${hostname()}:${process.pid}:x` });
    const closed = await closeOrphanedApprovals({ store, ledger: createRunLedger({ store, bus: createRunBus(), now: systemNow }), now: systemNow });
    expect(closed.map((approval) => approval.id)).toEqual(['apr_dead']);
    expect(await store.getApproval('apr_dead')).toMatchObject({ status: 'canceled', resolved_by: 'stop' });
    expect(await store.getApproval('apr_alive')).toMatchObject({ status: 'pending' });
    expect((await resolveEvents(store)).map((event) => event.data)).toEqual([{ approval_id: 'apr_dead', decision: 'denied', by: 'stop' }]);
  });
});

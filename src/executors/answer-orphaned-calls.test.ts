import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { eventFixture, runFixture, sessionFixture } from '../store/store-fixtures.ts';
import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { answerOrphanedCalls } from './answer-orphaned-calls.ts';

const at = '2025-01-01T00:00:05.000Z';
const now = () => at;
/** A process of another host, which cannot be probed: only its lease tells. */
const elsewhere = 'another-host:123:x';
const here = `${hostname()}:${process.pid}:x`;

/** A run's child session whose last step stored an unmarked call and died before its result. */
async function runWithOpenCall(lease: { status?: 'running' | 'completed'; lease_owner: string | null; lease_expires_at: string | null }): Promise<Store> {
  const store = createSqliteStore({ path: ':memory:' });
  await store.createSession(sessionFixture({ id: 'ses_1' }));
  await store.createSession(sessionFixture({ id: 'ses_child_run_1', parent_run_id: 'run_1' }));
  await store.insertRun(
    runFixture({ id: 'run_1', status: lease.status ?? 'running', lease_owner: lease.lease_owner, lease_expires_at: lease.lease_expires_at }),
    eventFixture('run_1'),
  );
  await store.appendMessages([
    { session_id: 'ses_child_run_1', role: 'user', content: 'go', created_at: at },
    { session_id: 'ses_child_run_1', role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: {} }], created_at: at },
  ]);
  return store;
}

const resultsOf = async (store: Store) => (await store.listMessages('ses_child_run_1')).filter((message) => message.role === 'tool');

describe("answerOrphanedCalls on a run's child session (unmarked calls)", () => {
  it('leaves the calls of a run held under a live lease alone', async () => {
    for (const lease of [
      { lease_owner: here, lease_expires_at: '2025-01-01T00:00:01.000Z' },
      { lease_owner: elsewhere, lease_expires_at: '2025-01-01T00:00:20.000Z' },
    ]) {
      const store = await runWithOpenCall(lease);
      expect(await answerOrphanedCalls({ store, sessionId: 'ses_child_run_1', now })).toBe(false);
      expect(await resultsOf(store)).toEqual([]);
      await store.close();
    }
  });

  it('answers them once the run is taken over, its lease expired, its owner gone or the run ended', async () => {
    for (const [lease, takenOver] of [
      [{ lease_owner: here, lease_expires_at: '2025-01-01T00:00:20.000Z' }, ['run_1']],
      [{ lease_owner: elsewhere, lease_expires_at: '2025-01-01T00:00:04.000Z' }, []],
      [{ lease_owner: `${hostname()}:2147483646:x`, lease_expires_at: '2025-01-01T00:00:20.000Z' }, []],
      [{ status: 'completed' as const, lease_owner: null, lease_expires_at: null }, []],
    ] as const) {
      const store = await runWithOpenCall(lease);
      expect(await answerOrphanedCalls({ store, sessionId: 'ses_child_run_1', now, takenOver })).toBe(true);
      const results = await resultsOf(store);
      expect(results).toHaveLength(1);
      expect(JSON.stringify(results[0].content)).toContain('The process stopped before this call finished');
      // The call's message is left as stored, and a second pass finds nothing to do.
      expect((await store.listMessages('ses_child_run_1'))[1].content).toEqual([{ type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: {} }]);
      expect(await answerOrphanedCalls({ store, sessionId: 'ses_child_run_1', now, takenOver })).toBe(false);
      await store.close();
    }
  });
});

describe('answerOrphanedCalls on a primary session whose process died mid-delegation', () => {
  /** A primary session whose dead process's `agent` calls started a foreground run still at work elsewhere and one that ended. */
  async function deadDelegation(): Promise<Store> {
    const store = createSqliteStore({ path: ':memory:' });
    await store.createSession(sessionFixture({ id: 'ses_1' }));
    const dead = `${hostname()}:2147483646:x`;
    await store.insertRun(
      runFixture({ id: 'run_1', tool_call_id: 'c1', status: 'running', lease_owner: elsewhere, lease_expires_at: '2025-01-01T00:00:20.000Z' }),
      eventFixture('run_1'),
    );
    await store.insertRun(runFixture({ id: 'run_2', tool_call_id: 'c2', status: 'completed', ended_at: at }), eventFixture('run_2'));
    const call = (id: string) => ({
      type: 'tool-call',
      toolCallId: id,
      toolName: 'agent',
      input: { agent: 'scout', task: 'look' },
      providerOptions: { cadre: { pending_owner: dead } },
    });
    await store.appendMessages([
      { session_id: 'ses_1', role: 'user', content: 'go', created_at: at },
      { session_id: 'ses_1', role: 'assistant', content: [call('c1'), call('c2')], created_at: at },
    ]);
    return store;
  }

  const answers = async (store: Store) =>
    (await store.listMessages('ses_1')).flatMap((message) =>
      message.role === 'tool' ? (message.content as Array<{ output: { value: string } }>).map((part) => part.output.value) : [],
    );

  it('promotes a foreground run the dead call waited for while it still works, and says it will notify; an ended one is told as ended', async () => {
    const store = await deadDelegation();
    const promoted: string[] = [];
    const promote = async (run: RunRecord) => {
      promoted.push(run.id);
      return store.updateRun(run.id, { mode: 'background', promoted_at: at });
    };
    expect(await answerOrphanedCalls({ store, sessionId: 'ses_1', now, promote })).toBe(true);
    expect(promoted).toEqual(['run_1']);
    const [first, second] = await answers(store);
    expect(first).toContain('run_1 (researcher) is running in the background; its result will arrive as a notification');
    expect(second).toContain('run_2 (researcher) ended completed; read its result with agent_output');
    await store.close();
  });

  it('tells a run that ended while it was being promoted as ended', async () => {
    const store = await deadDelegation();
    // The promotion's compare-and-set finds the run ended: it returns the run as its end left it.
    const promote = async (run: RunRecord): Promise<RunRecord> => ({ ...run, status: 'completed', ended_at: at });
    await answerOrphanedCalls({ store, sessionId: 'ses_1', now, promote });
    expect((await answers(store))[0]).toContain('run_1 (researcher) ended completed');
    await store.close();
  });

  it('describes the runs as they are without a promote', async () => {
    const store = await deadDelegation();
    await answerOrphanedCalls({ store, sessionId: 'ses_1', now });
    expect((await answers(store))[0]).toContain('run_1 (researcher) is running.');
    await store.close();
  });
});

import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { eventFixture, runFixture, sessionFixture } from '../store/store-fixtures.ts';
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
  await store.insertRun(runFixture({ id: 'run_1', status: lease.status ?? 'running', lease_owner: lease.lease_owner, lease_expires_at: lease.lease_expires_at }), eventFixture('run_1'));
  await store.appendMessages([
    { session_id: 'ses_child_run_1', role: 'user', content: 'go', created_at: at },
    { session_id: 'ses_child_run_1', role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: {} }], created_at: at },
  ]);
  return store;
}

const resultsOf = async (store: Store) => (await store.listMessages('ses_child_run_1')).filter((message) => message.role === 'tool');

describe('answerOrphanedCalls on a run\'s child session (unmarked calls)', () => {
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

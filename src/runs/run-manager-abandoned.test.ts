import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { sessionFixture } from '../store/store-fixtures.ts';
import { createRunBus } from './run-bus.ts';
import { createRunLedger } from './run-ledger.ts';
import type { RunExecutor } from './run-executor.ts';
import { createRunManager, type NewRunInput } from './run-manager.ts';

describe('a run its executor could not carry on (a queue gave it up)', () => {
  it('ends abandoned with its partial text, and a background one leaves its notification pending', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const bus = createRunBus();
    let clock = Date.parse('2026-01-01T00:00:00.000Z');
    const now = () => new Date((clock += 10)).toISOString();
    let ids = 0;
    const coordination = { publish: () => {}, subscribe: () => () => {}, close: async () => {} };
    const ledger = createRunLedger({ store, bus, now, coordination });
    const executor: RunExecutor = {
      execute: async () => ({
        text: '',
        lastText: 'Half of it',
        finishReason: 'error',
        steps: 1,
        abandoned: 'its worker died and no other worker could resume it',
      }),
    };
    const runs = createRunManager({
      store,
      bus,
      ledger,
      now,
      newId: (prefix) => `${prefix}_${++ids}`,
      ownerId: 'host:1:me',
      executor,
      coordination,
      limits: { maxActivePerParent: 5, maxQueuedPerParent: 50, maxActiveGlobal: 64, maxResultChars: 8000 },
    });
    await store.createSession(sessionFixture());
    await store.createSession(sessionFixture({ id: 'ses_child', parent_run_id: 'run_x' }));
    const input: NewRunInput = {
      parent_session_id: 'ses_1',
      child_session_id: 'ses_child',
      parent_run_id: null,
      tool_call_id: null,
      agent: 'scout',
      description: 'd',
      task: 't',
      context: null,
      mode: 'background',
      depth: 1,
      max_turns: 5,
      resumed_from: null,
    };
    const started = await runs.start(input);
    const ended = await runs.wait(started.id);
    expect(ended).toMatchObject({ status: 'abandoned', partial_result: 'Half of it', error: null, notification: { delivered_at: null, suppressed: false } });
    await runs.close();
    await store.close();
  });
});

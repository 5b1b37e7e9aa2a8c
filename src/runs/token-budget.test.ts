import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runFixture, sessionFixture } from '../store/store-fixtures.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';
import { createTokenBudget } from './token-budget.ts';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Two stores on one database file: two processes sharing it. */
async function twoProcesses(): Promise<[Store, Store]> {
  const directory = await mkdtemp(join(tmpdir(), 'cadre-budget-'));
  const path = join(directory, 'cadre.db');
  const first = createSqliteStore({ path });
  const second = createSqliteStore({ path });
  cleanup.push(
    () => rm(directory, { recursive: true, force: true }),
    () => first.close(),
    () => second.close(),
  );
  return [first, second];
}

const usage = (input_tokens: number, output_tokens: number) => ({ input_tokens, output_tokens });

describe('token budget', () => {
  it("counts a session's primary agent and every run under it, nested ones included, as stored by any process", async () => {
    const [here, elsewhere] = await twoProcesses();
    await here.createSession(sessionFixture({ id: 'ses_root' }));
    await here.createSession(sessionFixture({ id: 'ses_child_run_a', parent_run_id: 'run_a' }));
    await here.insertRun(runFixture({ id: 'run_a', parent_session_id: 'ses_root', usage: usage(100, 10) }), {
      run_id: 'run_a',
      at: '2025-01-01T00:00:01.000Z',
      type: 'run-queued',
      data: {},
    });
    await here.insertRun(runFixture({ id: 'run_b', parent_session_id: 'ses_child_run_a', parent_run_id: 'run_a', depth: 2, usage: usage(200, 20) }), {
      run_id: 'run_b',
      at: '2025-01-01T00:00:01.000Z',
      type: 'run-queued',
      data: {},
    });
    await here.flush();
    // Another process records the primary agent's tokens and a step of the nested run.
    await elsewhere.addSessionUsage('ses_root', usage(300, 30));
    await elsewhere.patchRun('run_b', { usage: usage(250, 25) });
    await elsewhere.flush();

    const budget = createTokenBudget({ store: here, limits: { maxTokensPerSession: 1000 } });
    // Asked from the nested run's session, the budget is the root's.
    expect(await budget.sessionTokens('ses_child_run_a')).toEqual({
      session_id: 'ses_root',
      agent: usage(300, 30),
      runs: usage(350, 35),
      total: 715,
      budget: 1000,
    });
    expect(await budget.sessionSpent('ses_root')).toBeNull();
    await elsewhere.addSessionUsage('ses_root', usage(285, 0));
    await elsewhere.flush();
    expect(await budget.sessionSpent('ses_child_run_a')).toMatch(/^This session's token budget is spent: 1000 of 1000 tokens used/);
    const run = (await here.getRun('run_a'))!;
    expect(await budget.exceeded(run, run.usage)).toBe('The session used 1000 tokens of its budget of 1000 (limits.maxTokensPerSession).');
  });

  it("counts a run's live usage over its stored one, and a run's own budget without reading the store", async () => {
    const [store] = await twoProcesses();
    await store.createSession(sessionFixture({ id: 'ses_root' }));
    await store.insertRun(runFixture({ id: 'run_a', parent_session_id: 'ses_root' }), {
      run_id: 'run_a',
      at: '2025-01-01T00:00:01.000Z',
      type: 'run-queued',
      data: {},
    });
    await store.insertRun(runFixture({ id: 'run_b', parent_session_id: 'ses_root' }), {
      run_id: 'run_b',
      at: '2025-01-01T00:00:01.000Z',
      type: 'run-queued',
      data: {},
    });
    const budget = createTokenBudget({ store, limits: { maxTokensPerRun: 500, maxTokensPerSession: 900 } });
    const runA = (await store.getRun('run_a'))!;
    expect(await budget.exceeded(runA, usage(499, 0))).toBeNull();
    expect(await budget.exceeded(runA, usage(450, 50))).toBe('The run used 500 tokens of its budget of 500 (limits.maxTokensPerRun).');
    // run_b's step is not stored yet, but this process's executor told the budget.
    budget.track('run_b', usage(400, 0));
    expect(await budget.exceeded(runA, usage(450, 49))).toBeNull();
    budget.track('run_b', usage(450, 0));
    expect(await budget.exceeded(runA, usage(450, 0))).toBe('The session used 900 tokens of its budget of 900 (limits.maxTokensPerSession).');
    budget.release('run_b');
    expect(await budget.exceeded(runA, usage(450, 0))).toBeNull();
  });
});

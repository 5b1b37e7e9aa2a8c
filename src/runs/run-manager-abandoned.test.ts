import { describe, expect, it } from 'vitest';
import { sessionFixture } from '../store/store-fixtures.ts';
import type { RunExecutor } from './run-executor.ts';
import { createRunManagerFixture } from './run-manager-fixtures.ts';
import type { NewRunInput } from './run-manager.ts';

describe('a run its executor could not carry on (a queue gave it up)', () => {
  it('ends abandoned with its partial text, and a background one leaves its notification pending', async () => {
    const executor: RunExecutor = {
      execute: async () => ({
        text: '',
        lastText: 'Half of it',
        finishReason: 'error',
        steps: 1,
        abandoned: 'its worker died and no other worker could resume it',
      }),
    };
    const { runs, store } = await createRunManagerFixture({ executor, limits: { maxActivePerParent: 5, maxQueuedPerParent: 50 } });
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

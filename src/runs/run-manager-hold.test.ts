import { afterEach, describe, expect, it } from 'vitest';
import { sessionFixture } from '../store/store-fixtures.ts';
import type { Store } from '../store/store.ts';
import type { RunExecutor } from './run-executor.ts';
import { createRunManagerFixture } from './run-manager-fixtures.ts';
import type { HoldOutcome, NewRunInput, RunHold, RunManager } from './run-manager.ts';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of cleanup.splice(0)) await close();
});

/** A run manager with one slot per parent whose executor finishes a run once told to. */
async function setup(): Promise<{
  runs: RunManager;
  store: Store;
  executed: string[];
  finish: (runId: string) => void;
  input: (index: number) => NewRunInput;
}> {
  const executed: string[] = [];
  const finishers = new Map<string, () => void>();
  const executor: RunExecutor = {
    async execute(run) {
      executed.push(run.id);
      await new Promise<void>((resolve) => finishers.set(run.id, resolve));
      return { text: 'done', lastText: 'done', finishReason: 'stop', steps: 1 };
    },
  };
  const { runs, store } = await createRunManagerFixture({ executor, limits: { maxActivePerParent: 1, maxQueuedPerParent: 1 } });
  const input = (index: number): NewRunInput => ({
    parent_session_id: 'ses_1',
    child_session_id: `ses_child_${index}`,
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
  });
  for (let index = 0; index < 5; index++) await store.createSession(sessionFixture({ id: `ses_child_${index}`, parent_run_id: `run_${index + 1}` }));
  cleanup.push(async () => {
    for (const resolve of finishers.values()) resolve();
    await runs.close();
    await store.close();
  });
  return { runs, store, executed, finish: (runId) => finishers.get(runId)?.(), input };
}

/** A hold settled by the test, with the signal it was given. */
function manualHold(): { hold: RunHold; settle: (outcome: HoldOutcome) => void; signal: () => AbortSignal | undefined } {
  const settled = Promise.withResolvers<HoldOutcome>();
  let given: AbortSignal | undefined;
  return {
    hold: {
      activity: { kind: 'awaiting_approval', tool: 'agent', argument: 'scout' },
      wait: (_run, signal) => {
        given = signal;
        return settled.promise;
      },
    },
    settle: settled.resolve,
    signal: () => given,
  };
}

describe('a run started with a hold', () => {
  it('waits queued with the hold’s activity, holding no slot and no queue place; once let go it joins the queue at its end, past its cap', async () => {
    const { runs, store, executed, finish, input } = await setup();
    const gate = manualHold();
    const held = await runs.start(input(0), { hold: gate.hold });
    expect(held).toMatchObject({ status: 'queued', last_activity: 'awaiting approval: agent scout' });
    // One slot and one queue place per parent: both go to the runs started after it.
    const first = await runs.start(input(1));
    const second = await runs.start(input(2));
    await expect.poll(() => executed).toEqual([first.id]);
    expect((await store.getRun(second.id))?.status).toBe('queued');
    gate.settle({ go: true });
    // Let go, it queues behind the second.
    await expect.poll(async () => (await store.getRun(held.id))?.last_activity).toBe('waiting for a slot');
    finish(first.id);
    await expect.poll(() => executed).toEqual([first.id, second.id]);
    finish(second.id);
    await expect.poll(() => executed).toEqual([first.id, second.id, held.id]);
    finish(held.id);
    expect(await runs.wait(held.id)).toMatchObject({ status: 'completed' });
  });

  it('ends failed with the hold’s error when it does not let the run go, never executing it', async () => {
    const { runs, executed, input } = await setup();
    const gate = manualHold();
    const held = await runs.start(input(0), { hold: gate.hold });
    gate.settle({ go: false, error: { kind: 'denied', message: 'A person denied it.' } });
    expect(await runs.wait(held.id)).toMatchObject({ status: 'failed', started_at: null, error: { kind: 'denied', message: 'A person denied it.' } });
    expect(executed).toEqual([]);
  });

  it('is stopped as a queued run is, aborting the hold; a late "go" changes nothing', async () => {
    const { runs, executed, input } = await setup();
    const gate = manualHold();
    const held = await runs.start(input(0), { hold: gate.hold });
    expect(await runs.stop(held.id, 'user')).toMatchObject({ status: 'canceled_by_user', started_at: null });
    expect(gate.signal()?.aborted).toBe(true);
    gate.settle({ go: true });
    await new Promise((resolve) => setImmediate(resolve));
    expect(executed).toEqual([]);
    expect(runs.isLocal(held.id)).toBe(false);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatRunOutput } from '../delegation/format-run-output.ts';
import { createNotifier } from '../sessions/notifier.ts';
import { createSessionInbox } from '../sessions/session-inbox.ts';
import type { RunRecord, RunStatus } from '../store/records.ts';
import { isFinished } from '../store/records.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { systemNow, timeSortedId } from '../util/clock.ts';
import { createRunBus } from './run-bus.ts';
import { createRunLedger } from './run-ledger.ts';
import type { ExecutionOutcome } from './run-executor.ts';
import { createRunManager } from './run-manager.ts';

const cap = 2;

type Command =
  | { kind: 'start'; parent: number; background: boolean }
  | { kind: 'complete'; pick: number; text: string }
  | { kind: 'fail'; pick: number }
  | { kind: 'stop'; pick: number; cause: 'user' | 'parent' }
  | { kind: 'read'; pick: number }
  | { kind: 'tick' };

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('start' as const), parent: fc.integer({ min: 0, max: 1 }), background: fc.boolean() }), weight: 4 },
  fc.record({ kind: fc.constant('complete' as const), pick: fc.nat(), text: fc.constantFrom('', '  ', 'done', 'a longer answer') }),
  fc.record({ kind: fc.constant('fail' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('stop' as const), pick: fc.nat(), cause: fc.constantFrom('user' as const, 'parent' as const) }),
  fc.record({ kind: fc.constant('read' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('tick' as const) }),
);

async function runScenario(commands: Command[], timeoutMs: number | undefined): Promise<void> {
  const store = createSqliteStore({ path: ':memory:' });
  const bus = createRunBus({
    onListenerError: (error) => {
      throw error;
    },
  });
  const ledger = createRunLedger({ store, bus, now: systemNow });
  const inbox = createSessionInbox();
  const notifier = createNotifier({ store, bus, inbox, now: systemNow, coalesceMs: 5 });
  const pending = new Map<string, (outcome: ExecutionOutcome) => void>();
  const transitions = new Map<string, RunStatus[]>();
  const running = new Map<string, Set<string>>();
  let maxRunning = 0;
  const notifications = new Map<string, number>();

  bus.subscribe((event) => {
    if (event.type !== 'run-event') return;
    const { run } = event;
    if (event.event.type === 'notification-deliver') notifications.set(run.id, (notifications.get(run.id) ?? 0) + 1);
    if (event.event.type !== 'run-start' && event.event.type !== 'run-end') return;
    transitions.set(run.id, [...(transitions.get(run.id) ?? []), run.status]);
    const set = running.get(run.parent_session_id) ?? new Set();
    running.set(run.parent_session_id, set);
    if (run.status === 'running') set.add(run.id);
    else set.delete(run.id);
    maxRunning = Math.max(maxRunning, set.size);
  });

  const settled: Promise<unknown>[] = [];
  const runs = createRunManager({
    store,
    bus,
    ledger,
    now: systemNow,
    newId: timeSortedId,
    ownerId: 'test',
    limits: { maxActivePerParent: cap, maxQueuedPerParent: 3, maxActiveGlobal: 3, maxResultChars: 100, runTimeoutMs: timeoutMs },
    onError: (error) => {
      throw error;
    },
    onRunFinished: (run) => {
      settled.push(notifier.runFinished(run));
    },
    executor: {
      execute: (_run, signal) =>
        new Promise<ExecutionOutcome>((resolve) => {
          pending.set(_run.id, resolve);
          signal.addEventListener('abort', () => resolve({ text: '', lastText: 'partial work', finishReason: 'abort', steps: 1 }), { once: true });
        }),
    },
  });

  const ids: string[] = [];
  const pick = (index: number) => ids[index % ids.length];
  for (const command of commands) {
    if (command.kind === 'start') {
      const parent = `ses_parent${command.parent}`;
      const run = await runs.start({
        parent_session_id: parent,
        child_session_id: timeSortedId('ses'),
        parent_run_id: null,
        tool_call_id: null,
        agent: 'general',
        description: 'd',
        task: 't',
        context: null,
        mode: command.background ? 'background' : 'foreground',
        depth: 1,
        max_turns: 3,
        resumed_from: null,
      });
      ids.push(run.id);
      continue;
    }
    if (command.kind === 'tick') {
      await new Promise((resolve) => setTimeout(resolve, 1));
      continue;
    }
    if (ids.length === 0) continue;
    const runId = pick(command.pick);
    if (command.kind === 'complete') pending.get(runId)?.({ text: command.text, lastText: command.text, finishReason: 'stop', steps: 1 });
    else if (command.kind === 'fail')
      pending.get(runId)?.({ text: '', lastText: '', finishReason: 'error', steps: 1, error: { kind: 'model_error', message: 'HTTP 500' } });
    else if (command.kind === 'stop') settled.push(runs.stop(runId, command.cause));
    else if (command.kind === 'read') {
      const run = await store.getRun(runId);
      if (run && isFinished(run.status) && run.consumed_at === null)
        await ledger.update(runId, { consumed_at: systemNow() }, { type: 'result-consume', data: { via: 'agent_output' } });
    }
  }
  // Let everything that is still going finish, then check the promises.
  for (const id of ids) pending.get(id)?.({ text: 'late answer', lastText: 'late answer', finishReason: 'stop', steps: 1 });
  for (let round = 0; round < 50 && runs.activeCount() > 0; round++) {
    for (const id of ids) pending.get(id)?.({ text: 'late answer', lastText: 'late answer', finishReason: 'stop', steps: 1 });
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await Promise.all(settled);
  await new Promise((resolve) => setTimeout(resolve, 10));

  expect(maxRunning).toBeLessThanOrEqual(cap);
  for (const id of ids) {
    const run = (await store.getRun(id)) as RunRecord;
    expect(isFinished(run.status)).toBe(true);
    // Never a transition out of a finished state: at most one run-start, then exactly one run-end.
    const moves = transitions.get(id) ?? [];
    expect(moves.filter((status) => isFinished(status))).toHaveLength(1);
    expect(isFinished(moves.at(-1)!)).toBe(true);
    // Never an empty result.
    const body = formatRunOutput(run).split('\n\n').slice(1).join('\n\n');
    expect(body.trim()).not.toBe('');
    if (run.status === 'completed') expect(run.result?.text.trim()).not.toBe('');
    if (run.status === 'completed_empty') expect(run.result).toBeNull();
    // Exactly one notification per eligible run, none for the others.
    const eligible = run.mode === 'background' && run.status !== 'canceled_by_parent' && run.notification?.suppressed !== true;
    expect(notifications.get(id) ?? 0).toBe(eligible ? 1 : 0);
    if (run.mode === 'background' && run.status !== 'canceled_by_parent' && run.notification?.suppressed === true) {
      expect(run.consumed_at).toBeTypeOf('string');
    }
  }
  await runs.close();
  await store.close();
}

describe('run lifecycle under races', () => {
  it('keeps every promise whatever order stops, completions, failures and reads come in', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArbitrary, { minLength: 1, maxLength: 40 }), (commands) => runScenario(commands, undefined)),
      { numRuns: 60 },
    );
  });

  it('keeps every promise when timeouts race with the rest', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArbitrary, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 4 }), (commands, timeoutMs) =>
        runScenario(commands, timeoutMs),
      ),
      { numRuns: 30 },
    );
  });
});

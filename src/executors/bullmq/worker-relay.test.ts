import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CoordinationSignal, SignalOf } from '../../coordination/coordination.ts';
import { createPollingCoordination } from '../../coordination/polling-coordination.ts';
import { createRunBus, type CadreEvent, type CadreListener } from '../../runs/run-bus.ts';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.ts';
import { runFixture } from '../../store/store-fixtures.ts';
import { createWorkerRelay } from './worker-relay.ts';

afterEach(() => {
  vi.useRealTimers();
});

/** A worker's relay on a coordination of its own, with one runtime whose watchers are counted. */
function setUp(nowMs?: () => number) {
  const coordination = createPollingCoordination({ store: createSqliteStore({ path: ':memory:' }) });
  const bus = createRunBus();
  const watchers = new Set<CadreListener>();
  const relay = createWorkerRelay({ coordination, nowMs });
  relay.attach({
    bus,
    watch(listener) {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
  });
  /** What the runtime publishes: on its bus, and to its watchers (as `cadre.subscribe` hears it). */
  const publish = (event: CadreEvent) => {
    bus.publish(event);
    for (const watcher of watchers) watcher(event);
  };
  const output: Array<SignalOf<'run-output'>> = [];
  const sent: CoordinationSignal[] = [];
  coordination.subscribe('run-output', 'host-a', (signal) => {
    output.push(signal);
    sent.push(signal);
  });
  const run = runFixture({ id: 'run_1', parent_session_id: 'ses_parent', child_session_id: 'ses_child' });
  coordination.subscribe('live-event', run.parent_session_id, (signal) => sent.push(signal));
  return { coordination, relay, publish, watchers, output, sent, run };
}

const delta = (session_id: string, text: string): CadreEvent => ({ type: 'text-delta', session_id, text });

describe('createWorkerRelay', () => {
  it('relays nothing but run events, and gives its runtimes no watcher, while the host is not watched', () => {
    const { relay, publish, watchers, output, sent, run } = setUp();
    relay.follow(run, { host: 'host-a', watched: false });
    expect(watchers.size).toBe(0);
    publish(delta('ses_child', 'Hello'));
    publish({ type: 'run-event', run, event: { type: 'activity', at: 'now', data: { kind: 'text', text: 'Hello' } } as never });
    expect(output).toEqual([]);
    expect(sent.map((signal) => signal.type)).toEqual(['live-event']);
  });

  it('joins the text of one session into one batch per 50 ms, sends it ahead of the next run event, in order with messages', () => {
    vi.useFakeTimers();
    const { relay, publish, watchers, output, sent, run } = setUp();
    relay.follow(run, { host: 'host-a', watched: true });
    expect(watchers.size).toBe(1);
    publish(delta('ses_child', 'Hel'));
    publish(delta('ses_child', 'lo'));
    const message = { session_id: 'ses_child', seq: 2, role: 'assistant', content: 'Hello', created_at: 'now' } as never;
    publish({ type: 'message', message });
    publish(delta('ses_child', ' again'));
    publish(delta('ses_other', 'not followed'));
    expect(output).toEqual([]);
    vi.advanceTimersByTime(50);
    expect(output).toEqual([
      { type: 'run-output', host: 'host-a', events: [delta('ses_child', 'Hello'), { type: 'message', message }, delta('ses_child', ' again')] },
    ]);
    publish(delta('ses_child', '!'));
    publish({ type: 'run-event', run, event: { type: 'run-end' } as never });
    // The run's end travels after the text that came before it.
    expect(sent.slice(1).map((signal) => signal.type)).toEqual(['run-output', 'live-event']);
    expect(output[1].events).toEqual([delta('ses_child', '!')]);
  });

  it('relays the output of runs a followed run starts, and stops when the host says nobody watches any more', () => {
    vi.useFakeTimers();
    const { coordination, relay, publish, watchers, output, run } = setUp();
    const release = relay.follow(run, { host: 'host-a', watched: false });
    coordination.publish({ type: 'views-watched', host: 'host-a', for_ms: 6_000 });
    expect(watchers.size).toBe(1);
    const nested = runFixture({ id: 'run_2', parent_session_id: 'ses_child', child_session_id: 'ses_nested', parent_run_id: 'run_1' });
    publish({ type: 'run-event', run: nested, event: { type: 'run-queued' } as never });
    publish(delta('ses_nested', 'deep'));
    vi.advanceTimersByTime(50);
    expect(output.at(-1)?.events).toEqual([delta('ses_nested', 'deep')]);
    coordination.publish({ type: 'views-watched', host: 'host-a', for_ms: 0 });
    expect(watchers.size).toBe(0);
    publish(delta('ses_nested', 'unseen'));
    vi.advanceTimersByTime(50);
    expect(output).toHaveLength(1);
    // A watch that is not repeated runs out by itself.
    coordination.publish({ type: 'views-watched', host: 'host-a', for_ms: 6_000 });
    expect(watchers.size).toBe(1);
    vi.advanceTimersByTime(6_001);
    expect(watchers.size).toBe(0);
    // Once its job ended, its sessions are forgotten.
    release();
    coordination.publish({ type: 'views-watched', host: 'host-a', for_ms: 6_000 });
    publish(delta('ses_child', 'after'));
    vi.advanceTimersByTime(50);
    expect(output).toHaveLength(1);
  });

  it('reads when a watch runs out on the clock it is given', () => {
    vi.useFakeTimers();
    let clock = 1_000_000;
    const { coordination, relay, publish, output, run } = setUp(() => clock);
    relay.follow(run, { host: 'host-a', watched: false });
    coordination.publish({ type: 'views-watched', host: 'host-a', for_ms: 6_000 });
    publish(delta('ses_child', 'seen'));
    vi.advanceTimersByTime(50);
    expect(output.map((signal) => signal.events)).toEqual([[delta('ses_child', 'seen')]]);
    // The given clock passed the watch's end (the system's did not): output is no longer relayed.
    clock += 6_001;
    publish(delta('ses_child', 'unseen'));
    vi.advanceTimersByTime(50);
    expect(output).toHaveLength(1);
  });

  it('sends a batch at once when its text passes the size bound', () => {
    vi.useFakeTimers();
    const { relay, publish, output, run } = setUp();
    relay.follow(run, { host: 'host-a', watched: true });
    publish(delta('ses_child', 'x'.repeat(16_000)));
    expect(output).toHaveLength(1);
  });
});

import { describe, expect, it, vi } from 'vitest';
import type { RunRecord } from '../store/records.ts';
import { createRunBus, type CadreEvent } from './run-bus.ts';

function runEvent(parent: string, child: string, type = 'run-start'): CadreEvent {
  const run = { id: `run_${child}`, parent_session_id: parent, child_session_id: child } as RunRecord;
  return { type: 'run-event', run, event: { type, at: '2026-01-01T00:00:00.000Z' } as never };
}
const delta = (sessionId: string): CadreEvent => ({ type: 'text-delta', session_id: sessionId, text: 'x' });

describe('createRunBus', () => {
  it('gives a scoped listener only the events of its session and of its runs’ child sessions, at any depth', () => {
    const bus = createRunBus();
    const seen: CadreEvent[] = [];
    bus.subscribe((event) => seen.push(event), { sessionId: 'ses_a' });
    bus.publish(delta('ses_b'));
    bus.publish(runEvent('ses_b', 'ses_b1'));
    expect(seen).toEqual([]);
    bus.publish(runEvent('ses_a', 'ses_a1'));
    bus.publish(delta('ses_a1'));
    bus.publish(runEvent('ses_a1', 'ses_a2'));
    bus.publish(delta('ses_a2'));
    expect(seen.map((event) => event.type)).toEqual(['run-event', 'text-delta', 'run-event', 'text-delta']);
  });

  it('calls only the interested listeners, however many sessions are watched', () => {
    const bus = createRunBus();
    const listeners = Array.from({ length: 2000 }, () => vi.fn());
    listeners.forEach((listener, index) => bus.subscribe(listener, { sessionId: `ses_${index}` }));
    const everything = vi.fn();
    bus.subscribe(everything);
    bus.publish(delta('ses_7'));
    expect(listeners.filter((listener) => listener.mock.calls.length > 0)).toEqual([listeners[7]]);
    expect(everything).toHaveBeenCalledTimes(1);
  });

  it('says whether an event of a session would reach anyone', () => {
    const bus = createRunBus();
    expect(bus.heard('ses_a')).toBe(false);
    const unsubscribe = bus.subscribe(() => {}, { sessionId: 'ses_a' });
    expect([bus.heard('ses_a'), bus.heard('ses_b')]).toEqual([true, false]);
    unsubscribe();
    const off = bus.subscribe(() => {});
    expect(bus.heard('ses_b')).toBe(true);
    off();
    expect(bus.heard('ses_a')).toBe(false);
  });

  it('adds a session a scoped listener follows, and forgets a listener once it unsubscribes', () => {
    const bus = createRunBus();
    const listener = vi.fn();
    const unsubscribe = bus.subscribe(listener, { sessionId: 'ses_a' });
    bus.follow(listener, 'ses_old_child');
    bus.publish(delta('ses_old_child'));
    expect(listener).toHaveBeenCalledTimes(1);
    unsubscribe();
    bus.publish(delta('ses_a'));
    bus.publish(delta('ses_old_child'));
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('reports and removes a listener that throws, and still calls the others', () => {
    const errors: unknown[] = [];
    const bus = createRunBus({ onListenerError: (error) => errors.push(error) });
    const throwing = vi.fn(() => {
      throw new Error('boom');
    });
    const other = vi.fn();
    bus.subscribe(throwing, { sessionId: 'ses_a' });
    bus.subscribe(other, { sessionId: 'ses_a' });
    bus.publish(delta('ses_a'));
    bus.publish(delta('ses_a'));
    expect(throwing).toHaveBeenCalledTimes(1);
    expect(other).toHaveBeenCalledTimes(2);
    expect(errors).toHaveLength(1);
  });
});

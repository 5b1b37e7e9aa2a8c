import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createScheduler } from './scheduler.ts';

const limits = { maxActivePerParent: 2, maxQueuedPerParent: 3, maxActiveGlobal: 3 };

describe('scheduler', () => {
  it('starts up to the per-parent cap and queues the rest in FIFO order', () => {
    const started: string[] = [];
    const scheduler = createScheduler(limits);
    const admit = (runId: string, parent = 'ses_a') => scheduler.admit({ runId, parentSessionId: parent, start: () => started.push(runId) });
    expect([admit('r1'), admit('r2'), admit('r3'), admit('r4')]).toEqual(['started', 'started', 'queued', 'queued']);
    scheduler.release('r1');
    expect(started).toEqual(['r1', 'r2', 'r3']);
    scheduler.release('r4');
    scheduler.release('r2');
    expect(started).toEqual(['r1', 'r2', 'r3']);
    expect(scheduler.counts('ses_a')).toEqual({ active: 1, queued: 0 });
  });

  it('refuses a run beyond maxQueuedPerParent', () => {
    const scheduler = createScheduler(limits);
    const results = ['a', 'b', 'c', 'd', 'e', 'f'].map((runId) => scheduler.admit({ runId, parentSessionId: 'p', start: () => {} }));
    expect(results).toEqual(['started', 'started', 'queued', 'queued', 'queued', 'full']);
  });

  it('never exceeds either cap, and starts every run once, whatever the order of events', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('admit' as const), parent: fc.integer({ min: 0, max: 3 }) }),
            fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }),
          ),
          { maxLength: 200, size: 'max' },
        ),
        (operations) => {
          const scheduler = createScheduler(limits);
          const running = new Map<string, string>();
          const startedCount = new Map<string, number>();
          const known: string[] = [];
          let next = 0;
          for (const operation of operations) {
            if (operation.kind === 'admit') {
              const runId = `r${next++}`;
              const parent = `p${operation.parent}`;
              known.push(runId);
              scheduler.admit({
                runId,
                parentSessionId: parent,
                start: () => {
                  running.set(runId, parent);
                  startedCount.set(runId, (startedCount.get(runId) ?? 0) + 1);
                },
              });
            } else if (known.length > 0) {
              const runId = known[operation.pick % known.length];
              running.delete(runId);
              scheduler.release(runId);
            }
            expect(running.size).toBeLessThanOrEqual(limits.maxActiveGlobal);
            const perParent = new Map<string, number>();
            for (const parent of running.values()) perParent.set(parent, (perParent.get(parent) ?? 0) + 1);
            for (const count of perParent.values()) expect(count).toBeLessThanOrEqual(limits.maxActivePerParent);
            expect(scheduler.totals().active).toBe(running.size);
          }
          for (const count of startedCount.values()) expect(count).toBe(1);
        },
      ),
    );
  });

  it('starts a queued run as soon as a slot frees up anywhere, keeps FIFO order per parent, and reports every run where it is', () => {
    type Operation = { kind: 'admit'; parent: number } | { kind: 'release'; pick: number };
    const operation: fc.Arbitrary<Operation> = fc.oneof(
      fc.record({ kind: fc.constant('admit' as const), parent: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }),
    );
    const capsOf = fc.record({
      maxActivePerParent: fc.integer({ min: 1, max: 3 }),
      maxQueuedPerParent: fc.integer({ min: 1, max: 4 }),
      maxActiveGlobal: fc.integer({ min: 1, max: 5 }),
    });
    fc.assert(
      fc.property(capsOf, fc.array(operation, { minLength: 20, maxLength: 120, size: 'max' }), (caps, operations) => {
        const scheduler = createScheduler(caps);
        // The reference: which runs run and which wait, per parent, in order.
        const running = new Map<string, string>();
        const queues = new Map<string, string[]>();
        const startOrder = new Map<string, string[]>();
        const admitted: string[] = [];
        const released = new Set<string>();
        let next = 0;
        const activeOf = (parent: string) => [...running.values()].filter((owner) => owner === parent).length;
        for (const step of operations) {
          if (step.kind === 'admit') {
            const runId = `r${next++}`;
            const parent = `p${step.parent}`;
            const queue = queues.get(parent) ?? [];
            const expected =
              queue.length === 0 && activeOf(parent) < caps.maxActivePerParent && running.size < caps.maxActiveGlobal
                ? 'started'
                : queue.length >= caps.maxQueuedPerParent
                  ? 'full'
                  : 'queued';
            const admission = scheduler.admit({
              runId,
              parentSessionId: parent,
              start: () => {
                expect(running.has(runId)).toBe(false);
                running.set(runId, parent);
                const waiting = queues.get(parent) ?? [];
                // A run started from the queue is the first one waiting for its parent.
                if (waiting[0] === runId) waiting.shift();
                startOrder.set(parent, [...(startOrder.get(parent) ?? []), runId]);
              },
            });
            expect(admission).toBe(expected);
            if (admission === 'queued') queues.set(parent, [...queue, runId]);
            if (admission !== 'full') admitted.push(runId);
          } else if (admitted.length > 0) {
            const runId = admitted[step.pick % admitted.length];
            if (released.has(runId)) continue;
            released.add(runId);
            running.delete(runId);
            for (const queue of queues.values()) if (queue.includes(runId)) queue.splice(queue.indexOf(runId), 1);
            scheduler.release(runId);
          }
          // Nobody waits while a slot is free for it.
          for (const [parent, queue] of queues) {
            if (queue.length > 0) expect(activeOf(parent) >= caps.maxActivePerParent || running.size >= caps.maxActiveGlobal).toBe(true);
            expect(scheduler.counts(parent)).toEqual({ active: activeOf(parent), queued: queue.length });
            for (const runId of queue) expect(scheduler.isQueued(runId)).toBe(true);
          }
          for (const runId of running.keys()) expect(scheduler.isQueued(runId)).toBe(false);
          const queued = [...queues.values()].reduce((sum, queue) => sum + queue.length, 0);
          expect(scheduler.totals()).toEqual({ active: running.size, queued });
          expect(running.size).toBeLessThanOrEqual(caps.maxActiveGlobal);
        }
        // Each parent's runs started in the order they were admitted.
        for (const order of startOrder.values()) expect(order).toEqual([...order].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))));
      }),
      { numRuns: 60 },
    );
  });

  it('starts a run queued behind the global cap when another parent frees a slot', () => {
    const started: string[] = [];
    const scheduler = createScheduler({ maxActivePerParent: 5, maxQueuedPerParent: 5, maxActiveGlobal: 2 });
    const admit = (runId: string, parent: string) => scheduler.admit({ runId, parentSessionId: parent, start: () => started.push(runId) });
    expect([admit('a1', 'a'), admit('a2', 'a'), admit('b1', 'b')]).toEqual(['started', 'started', 'queued']);
    expect(scheduler.isQueued('b1')).toBe(true);
    scheduler.release('a1');
    expect(started).toEqual(['a1', 'a2', 'b1']);
    expect(scheduler.isQueued('b1')).toBe(false);
    expect(scheduler.counts('b')).toEqual({ active: 1, queued: 0 });
    expect(scheduler.totals()).toEqual({ active: 2, queued: 0 });
    // The slot b1 holds is freed like any other.
    scheduler.release('b1');
    expect(scheduler.counts('b')).toEqual({ active: 0, queued: 0 });
    expect(scheduler.totals()).toEqual({ active: 1, queued: 0 });
  });

  it('gives free global slots to waiting parents in the order they became ready, not to the busiest one', () => {
    const started: string[] = [];
    const scheduler = createScheduler({ maxActivePerParent: 5, maxQueuedPerParent: 5, maxActiveGlobal: 1 });
    const admit = (runId: string, parent: string) => scheduler.admit({ runId, parentSessionId: parent, start: () => started.push(runId) });
    admit('x', 'x');
    for (const runId of ['a1', 'a2', 'a3']) admit(runId, 'a');
    admit('b1', 'b');
    admit('c1', 'c');
    for (const runId of ['x', 'a1', 'b1', 'c1', 'a2']) scheduler.release(runId);
    expect(started).toEqual(['x', 'a1', 'b1', 'c1', 'a2', 'a3']);
  });

  it('drops a queued run that is released before it starts, and never starts it', () => {
    const started: string[] = [];
    const scheduler = createScheduler({ maxActivePerParent: 1, maxQueuedPerParent: 2, maxActiveGlobal: 4 });
    const admit = (runId: string) => scheduler.admit({ runId, parentSessionId: 'p', start: () => started.push(runId) });
    expect([admit('r1'), admit('r2'), admit('r3'), admit('r4')]).toEqual(['started', 'queued', 'queued', 'full']);
    scheduler.release('r2');
    expect(scheduler.counts('p')).toEqual({ active: 1, queued: 1 });
    // The dropped run no longer counts against the queue cap.
    expect(admit('r5')).toBe('queued');
    scheduler.release('r1');
    expect(started).toEqual(['r1', 'r3']);
    scheduler.release('r2');
    scheduler.release('unknown');
    expect(scheduler.totals()).toEqual({ active: 1, queued: 1 });
  });

  it('keeps its order through thousands of waiting parents', () => {
    const started: string[] = [];
    const scheduler = createScheduler({ maxActivePerParent: 1, maxQueuedPerParent: 1, maxActiveGlobal: 1 });
    scheduler.admit({ runId: 'first', parentSessionId: 'p', start: () => started.push('first') });
    const parents = Array.from({ length: 3000 }, (_, index) => `p${index}`);
    for (const parent of parents) scheduler.admit({ runId: parent, parentSessionId: parent, start: () => started.push(parent) });
    let current = 'first';
    for (let index = 0; index < parents.length; index++) {
      scheduler.release(current);
      current = parents[index];
      expect(started.at(-1)).toBe(current);
      // Half of them come back at once with a second run, which waits behind the others.
      const again = `${current}-again`;
      if (index % 2 === 0) scheduler.admit({ runId: again, parentSessionId: current, start: () => started.push(again) });
    }
    for (let index = 0; index < parents.length; index += 2) {
      scheduler.release(current);
      current = `${parents[index]}-again`;
      expect(started.at(-1)).toBe(current);
    }
    expect(started).toHaveLength(1 + 3000 + 1500);
    expect(scheduler.totals()).toEqual({ active: 1, queued: 0 });
  });
});

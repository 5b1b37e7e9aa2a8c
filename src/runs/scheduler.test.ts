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
        fc.array(fc.oneof(fc.record({ kind: fc.constant('admit' as const), parent: fc.integer({ min: 0, max: 3 }) }), fc.record({ kind: fc.constant('release' as const), pick: fc.nat() })), { maxLength: 200 }),
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
              scheduler.admit({ runId, parentSessionId: parent, start: () => {
                running.set(runId, parent);
                startedCount.set(runId, (startedCount.get(runId) ?? 0) + 1);
              } });
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
});

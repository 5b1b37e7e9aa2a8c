import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLeaseKeeper } from './lease-keeper.ts';
import type { Store } from '../store/store.ts';

describe('createLeaseKeeper', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives the end of a lease taken now as an ISO-8601 time, following the clock', () => {
    let clock = '2025-01-01T00:00:00.000Z';
    const keeper = createLeaseKeeper({ store: {} as Store, now: () => clock, ownerId: 'owner', leaseMs: 15_000, holding: () => false });
    expect(keeper.until()).toBe('2025-01-01T00:00:15.000Z');
    expect(keeper.until()).toBe('2025-01-01T00:00:15.000Z');
    clock = '2025-01-01T23:59:50.500Z';
    expect(keeper.until()).toBe('2025-01-02T00:00:05.500Z');
    keeper.close();
  });

  it('renews the leases of its runs three times per lease while it holds any', async () => {
    vi.useFakeTimers();
    const renewals: Array<[string, string]> = [];
    let holding = true;
    const store = { renewLeases: async (owner: string, until: string) => void renewals.push([owner, until]) } as unknown as Store;
    const keeper = createLeaseKeeper({ store, now: () => '2025-01-01T00:00:00.000Z', ownerId: 'owner', leaseMs: 3000, holding: () => holding });
    await vi.advanceTimersByTimeAsync(2000);
    expect(renewals).toEqual([
      ['owner', '2025-01-01T00:00:03.000Z'],
      ['owner', '2025-01-01T00:00:03.000Z'],
    ]);
    holding = false;
    await vi.advanceTimersByTimeAsync(3000);
    expect(renewals).toHaveLength(2);
    keeper.close();
  });
});

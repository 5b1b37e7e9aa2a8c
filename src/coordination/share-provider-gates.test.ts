import { afterEach, describe, expect, it } from 'vitest';
import { createProviderGates } from '../models/provider-gates.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { createPollingCoordination } from './polling-coordination.ts';
import { shareProviderGates } from './share-provider-gates.ts';

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const each of open.splice(0).reverse()) await each.close();
});

describe('shareProviderGates', () => {
  it("closes every sharing runtime's gate of a provider when one of them meets a 429, and no other provider's", () => {
    const store = createSqliteStore({ path: ':memory:' });
    const coordination = createPollingCoordination({ store });
    const here = shareProviderGates(createProviderGates(), coordination);
    const there = shareProviderGates(createProviderGates(), coordination);
    open.push(store, coordination, here, there);
    // A gate is heard from once its provider has been used.
    expect(there.openAt('anthropic')).toBeUndefined();
    expect(there.openAt('openai')).toBeUndefined();
    const until = Date.now() + 5_000;
    here.closeUntil('anthropic', until);
    expect(there.openAt('anthropic')).toBeGreaterThanOrEqual(until - 50);
    expect(there.openAt('openai')).toBeUndefined();
  });

  it('announces nothing for a time already past', () => {
    const store = createSqliteStore({ path: ':memory:' });
    const coordination = createPollingCoordination({ store });
    const heard: unknown[] = [];
    coordination.subscribe('rate-limited', 'anthropic', (signal) => heard.push(signal));
    const gates = shareProviderGates(createProviderGates(), coordination);
    open.push(store, coordination, gates);
    gates.closeUntil('anthropic', Date.now() - 1);
    expect(heard).toEqual([]);
    gates.closeUntil('anthropic', Date.now() + 1_000);
    expect(heard).toEqual([{ type: 'rate-limited', provider: 'anthropic', delay_ms: expect.any(Number) }]);
  });
});

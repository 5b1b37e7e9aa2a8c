import { describe, expect, it } from 'vitest';
import { addPruning } from './pruned-set.ts';

describe('addPruning', () => {
  it('drops quiet entries once the set reaches its threshold, keeping busy ones and the new key', () => {
    const set = new Set<number>();
    const busy = new Set([3, 7]);
    const state = { threshold: 10, minimum: 10 };
    for (let key = 0; key < 9; key++) addPruning(set, key, (entry) => !busy.has(entry), state);
    expect(set.size).toBe(9);
    addPruning(set, 9, (entry) => !busy.has(entry), state);
    expect([...set].sort((a, b) => a - b)).toEqual([3, 7, 9]);
    expect(state.threshold).toBe(10);
  });

  it('stays bounded however many keys come, while the busy ones survive', () => {
    const set = new Set<number>();
    const state = { threshold: 100, minimum: 100 };
    for (let key = 0; key < 100_000; key++) addPruning(set, key, (entry) => entry % 1000 !== 0, state);
    expect(set.size).toBeLessThanOrEqual(200);
    for (let key = 0; key < 100_000; key += 1000) expect(set.has(key)).toBe(true);
  });
});

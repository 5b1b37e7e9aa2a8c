import { describe, expect, it } from 'vitest';
import { createKeyOrder } from './pg-key-order.ts';

describe('the order of writes per key', () => {
  it('runs a write at once when nothing of its keys waits, and returns its value', async () => {
    const order = createKeyOrder();
    const calls: string[] = [];
    const result = order.run(['r:1'], () => {
      calls.push('now');
      return 7;
    });
    expect(calls).toEqual(['now']);
    expect(await result).toBe(7);
  });

  it('keeps a later write of the same key behind one waiting for its commit, and lets other keys pass', async () => {
    const order = createKeyOrder();
    const calls: string[] = [];
    let commit!: () => void;
    const waiting = order.run(['r:1'], () => new Promise<void>((resolve) => (commit = resolve)).then(() => calls.push('commit')));
    const later = order.run(['r:1', 's:1'], () => calls.push('same key'));
    order.run(['r:2'], () => calls.push('other key'));
    const afterLater = order.run(['s:1'], () => calls.push('behind the later one'));
    expect(calls).toEqual(['other key']);
    let started = false;
    const allStarted = order.started().then(() => (started = true));
    await Promise.resolve();
    expect(started).toBe(false);
    commit();
    await Promise.all([waiting, later, afterLater, allStarted]);
    expect(calls).toEqual(['other key', 'commit', 'same key', 'behind the later one']);
  });

  it('lets the writes behind a failed one go on', async () => {
    const order = createKeyOrder();
    const failed = order.run(['r:1'], () => Promise.reject(new Error('refused')));
    const next = order.run(['r:1'], () => 'went on');
    await expect(failed).rejects.toThrow('refused');
    expect(await next).toBe('went on');
  });
});

import { describe, expect, it } from 'vitest';
import { followChanges } from './follow-changes.ts';

describe('followChanges', () => {
  it('emits each new value once, reads one at a time, and answers pokes during a read with one more read', async () => {
    const values = [{ kind: 'running' }, { kind: 'running' }, { kind: 'idle' }];
    let reads = 0;
    let release!: () => void;
    const emitted: unknown[] = [];
    const follower = followChanges(
      async () => {
        const value = values[Math.min(reads++, values.length - 1)];
        if (reads === 1) await new Promise<void>((resolve) => (release = resolve));
        return value;
      },
      (value) => emitted.push(value),
      (error) => {
        throw error;
      },
    );
    follower.poke();
    follower.poke();
    follower.poke();
    expect(reads).toBe(1);
    release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    // Three pokes: the first read and one more for the two that came during it; the same value is not sent twice.
    expect(reads).toBe(2);
    expect(emitted).toEqual([{ kind: 'running' }]);
    follower.poke();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(emitted).toEqual([{ kind: 'running' }, { kind: 'idle' }]);
    follower.stop();
    follower.poke();
    expect(reads).toBe(3);
  });

  it('reports a failed read and keeps following', async () => {
    const errors: unknown[] = [];
    let fail = true;
    const emitted: unknown[] = [];
    const follower = followChanges(
      async () => {
        if (fail) throw new Error('store gone');
        return 1;
      },
      (value) => emitted.push(value),
      (error) => errors.push(error),
    );
    follower.poke();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(errors).toHaveLength(1);
    fail = false;
    follower.poke();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(emitted).toEqual([1]);
  });
});

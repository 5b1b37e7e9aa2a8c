import { describe, expect, it } from 'vitest';
import { letEventLoopTurn } from './event-loop-turn.ts';

const busyFor = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // A chain of work that never yields.
  }
};
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('letEventLoopTurn', () => {
  it('costs nothing while the event loop turns often', async () => {
    letEventLoopTurn(20);
    await nextTurn();
    expect(letEventLoopTurn(20)).toBeUndefined();
  });

  it('lets a waiting callback run once the chain has been busy too long', async () => {
    letEventLoopTurn(50);
    await nextTurn();
    let ranImmediate = false;
    setImmediate(() => (ranImmediate = true));
    busyFor(60);
    const turn = letEventLoopTurn(50);
    expect(turn).toBeInstanceOf(Promise);
    expect(ranImmediate).toBe(false);
    await turn;
    expect(ranImmediate).toBe(true);
    // The turn it waited for counts: the next call is free again.
    expect(letEventLoopTurn(50)).toBeUndefined();
  });
});

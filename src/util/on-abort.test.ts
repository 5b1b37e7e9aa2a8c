import { describe, expect, it } from 'vitest';
import { onAbort } from './on-abort.ts';

describe('onAbort', () => {
  it('calls every callback once when the signal aborts, through one listener', () => {
    const controller = new AbortController();
    let added = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added++;
      add(...args);
    }) as typeof add;
    const calls: number[] = [];
    for (let index = 0; index < 100; index++) onAbort(controller.signal, () => calls.push(index));
    expect(added).toBe(1);
    controller.abort();
    controller.abort();
    expect(calls).toEqual(Array.from({ length: 100 }, (_, index) => index));
  });

  it('does not call a callback that was forgotten', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const forget = onAbort(controller.signal, () => calls.push('forgotten'));
    onAbort(controller.signal, () => calls.push('kept'));
    forget();
    controller.abort();
    expect(calls).toEqual(['kept']);
  });

  it('registers anew on another signal, and a callback added after the abort is not kept for later', () => {
    const first = new AbortController();
    const second = new AbortController();
    const calls: string[] = [];
    onAbort(first.signal, () => calls.push('first'));
    onAbort(second.signal, () => calls.push('second'));
    second.abort();
    expect(calls).toEqual(['second']);
    first.abort();
    expect(calls).toEqual(['second', 'first']);
  });
});

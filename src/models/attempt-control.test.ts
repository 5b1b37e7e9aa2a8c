import { afterEach, describe, expect, it, vi } from 'vitest';
import { AttemptTimeout, createAttemptController, createWatchdog } from './attempt-control.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('createWatchdog', () => {
  it('reads deadlines on the injected clock, not the system one', () => {
    vi.useFakeTimers();
    let now = 1_000_000;
    const watchdog = createWatchdog(100, () => now);
    const expired: string[] = [];
    watchdog.arm(() => expired.push('attempt'));
    // The system clock runs on, the injected one stands still: nothing expires.
    vi.advanceTimersByTime(500);
    expect(expired).toEqual([]);
    now += 99;
    vi.advanceTimersByTime(10);
    expect(expired).toEqual([]);
    now += 1;
    vi.advanceTimersByTime(10);
    expect(expired).toEqual(['attempt']);
  });

  it('times an attempt out on the injected clock, restarting on each touch', async () => {
    vi.useFakeTimers();
    let now = 0;
    const control = createAttemptController({ timeoutMs: 100, nowMs: () => now }).start(undefined);
    const pending = control.race(new Promise(() => {}));
    const outcome = pending.catch((error: unknown) => error);
    now += 80;
    control.touch();
    now += 80;
    vi.advanceTimersByTime(20);
    expect(control.timedOut).toBe(false);
    now += 20;
    vi.advanceTimersByTime(10);
    expect(control.timedOut).toBe(true);
    const timeout = await outcome;
    expect(timeout).toBeInstanceOf(AttemptTimeout);
    expect(timeout).toMatchObject({ name: 'AttemptTimeout', message: 'The model provider did not answer in time.' });
  });

  it('looks at deadlines a tenth of the timeout apart, and stops its timer once nothing is watched', () => {
    vi.useFakeTimers();
    let now = 0;
    const watchdog = createWatchdog(1000, () => now);
    const expired: string[] = [];
    watchdog.arm(() => expired.push('attempt'));
    expect(vi.getTimerCount()).toBe(1);
    now = 1000;
    vi.advanceTimersByTime(99);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['attempt']);
    vi.advanceTimersByTime(1000);
    expect(expired).toEqual(['attempt']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops the clock while paused and after the attempt ended', () => {
    vi.useFakeTimers();
    let now = 0;
    const attempts = createAttemptController({ timeoutMs: 100, nowMs: () => now });
    const paused = attempts.start(undefined);
    const ended = attempts.start(undefined);
    paused.pause();
    ended.end();
    now += 500;
    vi.advanceTimersByTime(500);
    expect(paused.timedOut).toBe(false);
    expect(ended.timedOut).toBe(false);
    expect(paused.signal.aborted).toBe(false);
  });
});

describe('createAttemptController', () => {
  it('hears a caller signal through one listener however many attempts follow it, and aborts each with its reason', async () => {
    const attempts = createAttemptController({ timeoutMs: 60_000 });
    const caller = new AbortController();
    const added = vi.spyOn(caller.signal, 'addEventListener');
    const first = attempts.start(caller.signal);
    const second = attempts.start(caller.signal);
    const firstSignal = first.signal;
    const secondSignal = second.signal;
    const pending = second.race(new Promise(() => {})).catch((error: unknown) => error);
    const reason = new Error('stopped by a person');
    caller.abort(reason);
    expect(added).toHaveBeenCalledTimes(1);
    expect(firstSignal.aborted).toBe(true);
    expect(firstSignal.reason).toBe(reason);
    expect(secondSignal.reason).toBe(reason);
    expect(await pending).toBe(reason);
    expect(first.timedOut).toBe(false);
    first.end();
    second.end();
  });

  it('leaves an attempt that ended alone when its caller aborts later', () => {
    const attempts = createAttemptController({ timeoutMs: 60_000 });
    const caller = new AbortController();
    const done = attempts.start(caller.signal);
    const signal = done.signal;
    done.end();
    caller.abort(new Error('later'));
    expect(signal.aborted).toBe(false);
  });

  it('starts an attempt already aborted when its caller was, and rejects what it races at once', async () => {
    const attempts = createAttemptController({ timeoutMs: 60_000 });
    const reason = new Error('stopped before the call');
    const attempt = attempts.start(AbortSignal.abort(reason));
    // The call's own failure is heard by nobody else: it must not surface as an unhandled rejection.
    await expect(attempt.race(Promise.reject(new Error('the call failed on its own')))).rejects.toBe(reason);
    expect(attempt.signal.reason).toBe(reason);
    attempt.end();
  });

  it('settles like the promise it races while the attempt lives', async () => {
    const attempts = createAttemptController({ timeoutMs: 60_000 });
    const attempt = attempts.start(undefined);
    await expect(attempt.race(Promise.resolve('answer'))).resolves.toBe('answer');
    const failure = new Error('provider failed');
    await expect(attempt.race(Promise.reject(failure))).rejects.toBe(failure);
    attempt.end();
  });

  it('aborts the request of an abandoned attempt, once, and not of one that ended well', () => {
    const attempts = createAttemptController({ timeoutMs: 60_000 });
    const abandoned = attempts.start(undefined);
    const signal = abandoned.signal;
    abandoned.end(true);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('The attempt was abandoned.');
    abandoned.abort(new Error('again'));
    expect((signal.reason as Error).message).toBe('The attempt was abandoned.');
    const kept = attempts.start(undefined);
    kept.end();
    expect(kept.signal.aborted).toBe(false);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { AttemptTimeout, attemptControl, createWatchdog } from './attempt-control.ts';

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
    const control = attemptControl(undefined, createWatchdog(100, () => now));
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
    expect(await outcome).toBeInstanceOf(AttemptTimeout);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { autoResumeStopOf, createAutoResume } from './auto-resume.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('createAutoResume', () => {
  it('wakes a hosted session once after the delay, gathering notifications that arrive meanwhile', async () => {
    vi.useFakeTimers();
    const resumed: string[] = [];
    const resumes = createAutoResume({
      delayMs: 40,
      resume: async (id) => resumed.push(id),
      isBusy: () => false,
      onError: (error) => {
        throw error;
      },
    });
    resumes.host('ses_a');
    resumes.schedule('ses_a');
    resumes.schedule('ses_a');
    expect(resumes.isQuiet('ses_a')).toBe(false);
    await vi.advanceTimersByTimeAsync(39);
    expect(resumed).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(resumed).toEqual(['ses_a']);
    expect(resumes.isQuiet('ses_a')).toBe(true);
  });

  it('waits 250 ms by default, and never wakes a session this process does not host', async () => {
    vi.useFakeTimers();
    const resumed: string[] = [];
    const resumes = createAutoResume({ resume: async (id) => resumed.push(id), isBusy: () => false, onError: () => {} });
    resumes.schedule('ses_elsewhere');
    resumes.host('ses_here');
    resumes.schedule('ses_here');
    await vi.advanceTimersByTimeAsync(249);
    expect(resumed).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(resumed).toEqual(['ses_here']);
  });

  it('drops pending wakes on cancel, and reports a resume that fails', async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    const failure = new Error('store gone');
    const resumes = createAutoResume({ delayMs: 10, resume: () => Promise.reject(failure), isBusy: () => false, onError: (error) => errors.push(error) });
    resumes.host('ses_a');
    resumes.host('ses_b');
    resumes.schedule('ses_a');
    resumes.cancel();
    await vi.advanceTimersByTimeAsync(20);
    expect(errors).toEqual([]);
    resumes.schedule('ses_b');
    await vi.advanceTimersByTimeAsync(10);
    expect(errors).toEqual([failure]);
  });

  it('keeps busy sessions and lets quiet ones go once the hosted set grows large', () => {
    const busy = new Set(['ses_busy']);
    const resumes = createAutoResume({ resume: async () => {}, isBusy: (id) => busy.has(id), onError: () => {} });
    resumes.host('ses_busy');
    for (let index = 0; index < 1100; index++) resumes.host(`ses_${index}`);
    const hosted = new Set(resumes.hosted());
    expect(hosted.has('ses_busy')).toBe(true);
    expect(hosted.size).toBeLessThan(1101);
  });
});

describe('autoResumeStopOf', () => {
  const user = { role: 'user' };
  const assistant = { role: 'assistant' };

  it('says the cap stopped the session when notifications wait after its last answer', () => {
    expect(autoResumeStopOf({ auto_resumes: 10, user_canceled_at: null }, [user, assistant, user, user], 10)).toEqual({ resumes: 10, waiting: 2 });
  });

  it('says nothing below the cap, with nothing waiting, or after a person stopped the session', () => {
    expect(autoResumeStopOf({ auto_resumes: 9, user_canceled_at: null }, [user, assistant, user], 10)).toBeNull();
    expect(autoResumeStopOf({ auto_resumes: 10, user_canceled_at: null }, [user, assistant], 10)).toBeNull();
    expect(autoResumeStopOf({ auto_resumes: 10, user_canceled_at: '2026-01-01T00:00:00.000Z' }, [user, assistant, user], 10)).toBeNull();
  });
});

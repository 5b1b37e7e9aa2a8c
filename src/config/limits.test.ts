import { describe, expect, it } from 'vitest';
import { defaultLimits, limitsSchema, resolveLimits } from './limits.ts';

describe('limits', () => {
  it('has the contract defaults, with no run timeout', () => {
    expect(defaultLimits).toEqual({
      maxActivePerParent: 5,
      maxQueuedPerParent: 50,
      maxActiveGlobal: 64,
      maxDepth: 1,
      maxParallelTasks: 10,
      defaultMaxTurns: 20,
      maxResultChars: 8000,
      maxContextChars: 4000,
      foregroundWarningMs: 600_000,
      maxAutoResumes: 10,
      runTimeoutMs: undefined,
      modelTimeoutMs: 600_000,
      maxRetries: 2,
      approvalTimeoutMs: 300_000,
      maxOutputRepairs: 2,
    });
    expect(Object.isFrozen(defaultLimits)).toBe(true);
  });

  it('accepts a partial override and fills in the rest', () => {
    expect(limitsSchema.parse({ maxDepth: 3 })).toEqual({ maxDepth: 3 });
    expect(resolveLimits({ maxDepth: 3 })).toEqual({ ...defaultLimits, maxDepth: 3 });
    expect(resolveLimits()).toEqual(defaultLimits);
  });

  it('names an unknown key and a value that is not a positive whole number', () => {
    expect(() => resolveLimits({ maxDepht: 3 } as never)).toThrow(/^limits\.maxDepht: unknown limit \(known limits: maxActivePerParent/);
    expect(() => resolveLimits({ maxDepth: -1 })).toThrow('limits.maxDepth: must be a positive whole number');
    expect(() => resolveLimits({ runTimeoutMs: 1.5 })).toThrow('limits.runTimeoutMs: must be a positive whole number');
  });

  it('allows no retries at all but no negative count, and only a positive model timeout', () => {
    expect(resolveLimits({ maxRetries: 0 }).maxRetries).toBe(0);
    expect(() => resolveLimits({ maxRetries: -1 })).toThrow('limits.maxRetries: must be a whole number, 0 or more');
    expect(() => resolveLimits({ modelTimeoutMs: 0 })).toThrow('limits.modelTimeoutMs: must be a positive whole number');
  });

  it('takes token budgets per run and per session, with none by default', () => {
    expect(defaultLimits.maxTokensPerRun).toBeUndefined();
    expect(defaultLimits.maxTokensPerSession).toBeUndefined();
    expect(resolveLimits({ maxTokensPerRun: 5000, maxTokensPerSession: 20_000 })).toMatchObject({ maxTokensPerRun: 5000, maxTokensPerSession: 20_000 });
    expect(() => resolveLimits({ maxTokensPerRun: 0 })).toThrow('limits.maxTokensPerRun: must be a positive whole number');
    expect(() => resolveLimits({ maxTokensPerSession: 2.5 })).toThrow('limits.maxTokensPerSession: must be a positive whole number');
  });
});

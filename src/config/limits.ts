import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';

/** Caps on delegation; see docs/runs-and-limits.md. */
export interface Limits {
  /** Running runs per parent session, foreground and background together; more wait `queued`. @default 5 */
  maxActivePerParent: number;
  /** Queued runs per parent session; beyond it a new run fails at once with `too_many_active`. @default 50 */
  maxQueuedPerParent: number;
  /** Running runs per process. @default 64 */
  maxActiveGlobal: number;
  /** How deep delegation goes; at 1 subagents cannot delegate. @default 1 */
  maxDepth: number;
  /** Tasks in one `agent_parallel` call. @default 10 */
  maxParallelTasks: number;
  /** Turn cap of an agent that sets none. @default 20 */
  defaultMaxTurns: number;
  /** Results longer than this reach the parent truncated. @default 8000 */
  maxResultChars: number;
  /** The `context` parameter is cut to this many characters. @default 4000 */
  maxContextChars: number;
  /** A foreground run past this is promoted to the background. @default 600000 */
  foregroundWarningMs: number;
  /** Auto-resumes of a parent in a row without a user message. @default 10 */
  maxAutoResumes: number;
  /** When set, a run past it fails with `timeout`. @default undefined (no timeout) */
  runTimeoutMs: number | undefined;
  /**
   * A model request with no response (unstreamed) or no new chunk (streamed) for this long is
   * aborted and counts as a failed attempt. @default 600000
   */
  modelTimeoutMs: number;
  /**
   * Retries of a model request that failed before any output, streamed or not; `retry-after` is
   * honoured up to 60 s. @default 2
   */
  maxRetries: number;
  /**
   * Input + output tokens of one run's own steps; past it the run ends `failed` /
   * `budget_exceeded` with its partial result. @default undefined (no budget)
   */
  maxTokensPerRun: number | undefined;
  /**
   * Input + output tokens of a parent session, its primary agent and all its runs (nested ones
   * included) together; once spent no new run starts and running ones end `budget_exceeded`.
   * @default undefined (no budget)
   */
  maxTokensPerSession: number | undefined;
  /** How long an ask for approval waits for a person before it is denied (`by: timeout`). @default 300000 */
  approvalTimeoutMs: number;
  /**
   * Times a missing or invalid structured value (`output_schema`) goes back to the subagent with
   * what is wrong; then the run fails `invalid_output`. @default 2
   */
  maxOutputRepairs: number;
}

/** The limits that apply when nothing overrides them. */
export const defaultLimits: Readonly<Limits> = Object.freeze({
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
  maxTokensPerRun: undefined,
  maxTokensPerSession: undefined,
  approvalTimeoutMs: 300_000,
  maxOutputRepairs: 2,
});

const positiveInteger = z.int({ error: 'must be a positive whole number' }).positive({ error: 'must be a positive whole number' });

/** Overrides of some limits, as written in `cadre.config.json`; unknown keys are rejected. */
export const limitsSchema = z.strictObject({
  maxActivePerParent: positiveInteger.optional(),
  maxQueuedPerParent: positiveInteger.optional(),
  maxActiveGlobal: positiveInteger.optional(),
  maxDepth: positiveInteger.optional(),
  maxParallelTasks: positiveInteger.optional(),
  defaultMaxTurns: positiveInteger.optional(),
  maxResultChars: positiveInteger.optional(),
  maxContextChars: positiveInteger.optional(),
  foregroundWarningMs: positiveInteger.optional(),
  maxAutoResumes: positiveInteger.optional(),
  runTimeoutMs: positiveInteger.optional(),
  modelTimeoutMs: positiveInteger.optional(),
  maxRetries: z.int({ error: 'must be a whole number, 0 or more' }).nonnegative({ error: 'must be a whole number, 0 or more' }).optional(),
  maxTokensPerRun: positiveInteger.optional(),
  maxTokensPerSession: positiveInteger.optional(),
  approvalTimeoutMs: positiveInteger.optional(),
  maxOutputRepairs: z.int({ error: 'must be a whole number, 0 or more' }).nonnegative({ error: 'must be a whole number, 0 or more' }).optional(),
}) satisfies z.ZodType<Partial<Limits>>;

/** What an unknown key under `limits` is told. */
export const unknownLimitMessage = `unknown limit (known limits: ${Object.keys(defaultLimits).join(', ')})`;

/**
 * The default limits with `overrides` applied, for runtimes built in code.
 * @throws {ConfigError} naming the first bad key.
 * @example resolveLimits({ maxDepth: 2 })
 */
export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  const result = limitsSchema.safeParse(overrides);
  if (!result.success) {
    const issue = result.error.issues[0];
    const key = issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path.join('.');
    const message = issue.code === 'unrecognized_keys' ? unknownLimitMessage : issue.message;
    throw new ConfigError(`limits.${key}: ${message}`);
  }
  const defined = Object.entries(result.data).filter(([, value]) => value !== undefined);
  return { ...defaultLimits, ...Object.fromEntries(defined) };
}

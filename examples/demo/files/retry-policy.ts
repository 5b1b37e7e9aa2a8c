// The demo's editor subagent changes a scratch copy of this file (.cadre/demo-scratch/), never this one.

/** How many times a failed model request is tried in all, the first try included. */
export const maxAttempts = 3;

/** How long to wait before the next try, in milliseconds. */
export function retryDelayMs(attempt: number): number {
  return Math.min(60_000, 500 * 2 ** attempt);
}

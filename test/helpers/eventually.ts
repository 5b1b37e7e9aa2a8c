/**
 * The one way tests wait for something another part (or process) makes true: vitest's own
 * `vi.waitFor`, retrying `look` until it returns a truthy value, which it then returns. On time
 * out it fails with `what` and the last value or error seen, so a failing test says what it
 * waited for.
 * @module
 */
import { vi } from 'vitest';

/** How long and how often {@link eventually} looks. */
export interface EventuallyOptions {
  /** @default 5_000 */
  timeout?: number;
  /** @default 10 */
  interval?: number;
  /** What the test waits for, for the failure message. @default 'the condition' */
  what?: string;
}

/**
 * Resolves with the first truthy value `look` returns (an error it throws counts as "not yet").
 * @example const run = await eventually(async () => (await store.listRuns({}))[0], { what: 'a run' });
 */
export async function eventually<T>(
  look: () => T | Promise<T>,
  { timeout = 5_000, interval = 10, what = 'the condition' }: EventuallyOptions = {},
): Promise<NonNullable<T>> {
  return vi.waitFor(
    async () => {
      const value = await look();
      if (!value) throw new Error(`still waiting for ${what} (last value: ${String(value)})`);
      return value as NonNullable<T>;
    },
    { timeout, interval },
  );
}

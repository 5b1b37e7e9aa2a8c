import { StatementSync } from 'node:sqlite';

/** What the SQLite statements of some work cost this thread, timed one by one. */
export interface StatementTimes {
  /** Milliseconds spent inside statements (their `run`, `get`, `all` and `iterate` calls). */
  totalMs: number;
  /** Of those, in `COMMIT`: writing the transaction's pages to the WAL. */
  commitMs: number;
  statements: number;
}

const methods = ['run', 'get', 'all', 'iterate'] as const;

/**
 * Runs `work` with every `StatementSync` call of this thread timed (the prototype's methods are
 * wrapped for its duration, then put back). Connections of other threads (the background
 * checkpoints) are not counted. The wrapping adds two clock reads per statement, well under a
 * microsecond.
 */
export async function timeStatements(work: () => Promise<unknown>): Promise<StatementTimes> {
  const times: StatementTimes = { totalMs: 0, commitMs: 0, statements: 0 };
  const prototype = StatementSync.prototype as unknown as Record<(typeof methods)[number], (...args: unknown[]) => unknown>;
  const originals = methods.map((name) => prototype[name]);
  methods.forEach((name, index) => {
    const original = originals[index];
    prototype[name] = function timed(this: StatementSync, ...args: unknown[]) {
      const started = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        const elapsed = performance.now() - started;
        times.totalMs += elapsed;
        times.statements++;
        if (this.sourceSQL === 'COMMIT') times.commitMs += elapsed;
      }
    };
  });
  try {
    await work();
  } finally {
    methods.forEach((name, index) => (prototype[name] = originals[index]));
  }
  return times;
}

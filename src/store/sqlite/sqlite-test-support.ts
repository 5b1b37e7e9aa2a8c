import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StatementSync } from 'node:sqlite';
import { afterAll } from 'vitest';

/** For the SQLite store's tests: a function giving a new database path (in a folder of its own) per call, all removed after the file's tests. */
export function testFiles(prefix: string): () => string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  let fileCount = 0;
  return () => {
    fileCount++;
    return join(folder, `nested-${fileCount}`, 'cadre.db');
  };
}

/** Counts the runs of statements whose SQL matches `pattern` (run, get or all) until `stop()`. */
export function countStatements(pattern: RegExp): { stop: () => number } {
  let count = 0;
  const originals = { run: StatementSync.prototype.run, get: StatementSync.prototype.get, all: StatementSync.prototype.all };
  for (const method of ['run', 'get', 'all'] as const) {
    const original = originals[method] as (...values: unknown[]) => unknown;
    (StatementSync.prototype as unknown as Record<string, unknown>)[method] = function (this: StatementSync, ...values: unknown[]) {
      if (pattern.test(this.sourceSQL)) count++;
      return original.apply(this, values);
    };
  }
  return {
    stop() {
      Object.assign(StatementSync.prototype, originals);
      return count;
    },
  };
}

/** Counts the INSERT statements run into `messages` and `run_events` until `stop()`. */
export function countInserts(): { stop: () => { run_events: number; messages: number } } {
  const counts = { run_events: 0, messages: 0 };
  const run = StatementSync.prototype.run;
  StatementSync.prototype.run = function (this: StatementSync, ...values: unknown[]) {
    const match = /^INSERT INTO (run_events|messages) /.exec(this.sourceSQL);
    if (match) counts[match[1] as 'run_events' | 'messages']++;
    return run.apply(this, values as Parameters<typeof run>);
  } as typeof run;
  return {
    stop() {
      StatementSync.prototype.run = run;
      return counts;
    },
  };
}

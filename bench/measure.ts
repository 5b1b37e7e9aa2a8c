import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Peak memory of the process while a case runs, in MB. */
export interface MemoryPeaks {
  /** RSS when the probe started, after a full GC. */
  startRss: number;
  /** The highest RSS seen. */
  rss: number;
  /** The highest V8 heap use seen: unlike RSS, it falls again after a GC, so cases run later are not charged for earlier ones. */
  heap: number;
}

/** Samples memory until stopped. */
export interface MemoryProbe {
  stop(): MemoryPeaks;
}

const megabyte = 1024 * 1024;

/** Runs a full GC when node was started with `--expose-gc` (the bench script does that). */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * Collects garbage, then samples `process.memoryUsage()` every `intervalMs` until stopped.
 * Samples are taken on the event loop, so a long synchronous stretch is seen when it ends.
 */
export function probeMemory(intervalMs = 10): MemoryProbe {
  collectGarbage();
  const startRss = process.memoryUsage.rss();
  let rss = startRss;
  let heap = 0;
  const sample = () => {
    const usage = process.memoryUsage();
    rss = Math.max(rss, usage.rss);
    heap = Math.max(heap, usage.heapUsed);
  };
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { startRss: startRss / megabyte, rss: rss / megabyte, heap: heap / megabyte };
    },
  };
}

/** Wall and CPU time (user + system, all threads) since it was started, in ms. */
export function startClock(): () => { wallMs: number; cpuMs: number } {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { wallMs: performance.now() - wall, cpuMs: (used.user + used.system) / 1000 };
  };
}

/** The value at quantile `q` (0..1) of unsorted numbers, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** The median of unsorted numbers. */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** A fresh temporary folder, removed by the returned function. */
export function temporaryFolder(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), `${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A Markdown table from a header row and data rows. */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** A number with a fixed count of decimals, for tables. */
export function fixed(value: number, decimals = 0): string {
  return Number.isFinite(value) ? value.toFixed(decimals) : 'n/a';
}

import { join } from 'node:path';
import { createCadre } from '../src/runtime/create-cadre.ts';
import type { RunRecord } from '../src/store/records.ts';
import type { Store } from '../src/store/store.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { createBenchModel } from './bench-model.ts';
import { createErrorSink, noopTool, workerAgent } from './bench-tools.ts';
import type { BareCall } from './fanout-bare.ts';
import { runBareLifecycle } from './lifecycle-bare.ts';
import { fixed, markdownTable, probeMemory, quantile, startClock, temporaryFolder, type MemoryPeaks } from './measure.ts';

/** Sizes of the lifecycle benchmark. */
export interface LifecycleOptions {
  /** Parent sessions, all started at once. */
  parents: number;
  /** Background runs each parent starts in its first model call. */
  runsPerParent: number;
  /** `noop` calls per run before its short answer (turns per run = toolCalls + 1). */
  toolCalls: number;
  /** `limits.maxActiveGlobal` of each case, one case per value; `maxActivePerParent` stays at its default of 5. */
  maxActiveGlobal: number[];
  /** AI SDK calls to run alone on the same subagent work after each cadre case, as a ceiling. */
  bareCalls: BareCall[];
}

/**
 * Milliseconds from each run's stored `run-end` event to its stored `notification-deliver` event,
 * read from the file afterwards. (A live `cadre.subscribe` listener would turn on text streaming,
 * which cadre does only while someone watches.)
 */
async function notificationLatencies(store: Store, runs: RunRecord[]): Promise<number[]> {
  const latencies: number[] = [];
  for (const run of runs) {
    const events = await store.listRunEvents(run.id);
    const ended = events.find((event) => event.type === 'run-end');
    const delivered = events.find((event) => event.type === 'notification-deliver');
    if (ended && delivered) latencies.push(Date.parse(delivered.at) - Date.parse(ended.at));
  }
  return latencies;
}

/** One lifecycle case, measured and checked. */
interface LifecycleResult {
  calls: number;
  wallMs: number;
  cpuMs: number;
  memory: MemoryPeaks;
  latencies: number[];
  /** Runs missing, or finished otherwise than `completed`. */
  unfinished: number;
  /** Runs without `notification.delivered_at`. */
  undelivered: number;
}

async function runCase(options: LifecycleOptions, maxActiveGlobal: number): Promise<LifecycleResult> {
  const folder = temporaryFolder('cadre-bench-lifecycle');
  const path = join(folder.path, 'cadre.db');
  const model = createBenchModel({ fanOut: options.runsPerParent, background: true, toolCalls: options.toolCalls, answerChars: 40 });
  const errors = createErrorSink();
  const cadre = createCadre({
    store: createSqliteStore({ path }),
    model,
    agents: [workerAgent],
    tools: { noop: noopTool },
    limits: { maxActiveGlobal },
    onError: errors.report,
  });
  try {
    const probe = probeMemory();
    const sessions = await Promise.all(Array.from({ length: options.parents }, () => cadre.createSession()));
    const elapsed = startClock();
    const turns = await Promise.all(sessions.map((session) => cadre.send(session.id, 'Start the background work.')));
    await Promise.all(sessions.map((session) => cadre.waitForIdle(session.id)));
    // Part of the measured time: everything is committed before the clock stops.
    await cadre.store.flush();
    const { wallMs, cpuMs } = elapsed();
    const memory = probe.stop();
    errors.check('lifecycle');
    const failed = turns.find((turn) => turn.status !== 'completed');
    if (failed) throw new Error(`A parent turn ended ${failed.status}: ${failed.error ?? ''}`);
    await cadre.close();
    await cadre.store.close();

    // Read back through a new connection: only what was committed to the file counts.
    const reader = createSqliteStore({ path });
    const runs = await reader.listRuns({});
    const latencies = await notificationLatencies(reader, runs);
    await reader.close();
    const expected = options.parents * options.runsPerParent;
    const completed = runs.filter((run) => run.status === 'completed').length;
    const undelivered = runs.filter((run) => !run.notification?.delivered_at).length + Math.max(0, expected - runs.length);
    return { calls: model.calls, wallMs, cpuMs, memory, latencies, unfinished: expected - completed, undelivered };
  } finally {
    await cadre.close();
    folder.remove();
  }
}

/**
 * Lifecycle: `parents` sessions each start `runsPerParent` background runs of `toolCalls + 1`
 * turns, answer "started", and auto-resume when the notifications arrive. All sessions are sent
 * their message at once, then awaited until idle. Afterwards every run must be completed with its
 * notification delivered, read back from the database file. One case per global cap, each
 * followed by the AI SDK alone on the same subagent work as a ceiling; returns the Markdown report.
 */
export async function runLifecycle(options: LifecycleOptions): Promise<string> {
  const runs = options.parents * options.runsPerParent;
  const subagentCalls = runs * (options.toolCalls + 1);
  const rows: Array<Array<string | number>> = [];
  const measured = (calls: number, { wallMs, cpuMs, memory }: { wallMs: number; cpuMs: number; memory: MemoryPeaks }) => [
    fixed(wallMs / 1000, 1),
    fixed(calls / (wallMs / 1000)),
    fixed(calls / (cpuMs / 1000)),
    `${fixed(memory.rss)} (start ${fixed(memory.startRss)})`,
    fixed(memory.heap),
  ];
  for (const cap of options.maxActiveGlobal) {
    const cadre = await runCase(options, cap);
    const { latencies } = cadre;
    rows.push([
      'cadre',
      cap,
      `${cadre.calls} (${subagentCalls} + ${cadre.calls - subagentCalls})`,
      ...measured(cadre.calls, cadre),
      `${fixed(quantile(latencies, 0.5), 1)} / ${fixed(quantile(latencies, 0.99), 1)} / ${fixed(Math.max(...latencies), 1)}`,
      cadre.unfinished,
      cadre.undelivered,
    ]);
    for (const call of options.bareCalls) {
      const bare = await runBareLifecycle({ call, runs, toolCalls: options.toolCalls, concurrency: cap });
      rows.push([`AI SDK ${call} alone`, cap, `${bare.calls} (subagents only)`, ...measured(bare.calls, bare), 'n/a', 'n/a', 'n/a']);
    }
  }
  const table = markdownTable(
    [
      'implementation',
      'maxActiveGlobal',
      'model calls',
      'wall s',
      'turns/s',
      'turns per CPU s',
      'peak RSS MB',
      'peak heap MB',
      'notification p50 / p99 / max ms',
      'runs not completed',
      'notifications missing',
    ],
    rows,
  );
  const setup = `${options.parents} parents × ${options.runsPerParent} background runs of ${options.toolCalls + 1} turns; maxActivePerParent 5 (default); latency from each run's stored \`run-end\` event to its stored \`notification-deliver\` event (ms timestamps). The AI SDK rows run the same ${runs} subagent loops with that many at a time, without parents or persistence.`;
  return `### Lifecycle\n\n${setup}\n\n${table}\n`;
}

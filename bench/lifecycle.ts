import { join } from 'node:path';
import { createCadre, type Cadre } from '../src/runtime/create-cadre.ts';
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

/** Milliseconds from each background run's `run-end` event to its `notification-deliver` event. */
function trackNotificationLatency(cadre: Cadre): number[] {
  const ended = new Map<string, number>();
  const latencies: number[] = [];
  cadre.subscribe((event) => {
    if (event.type !== 'run-event' || event.run.mode !== 'background') return;
    if (event.event.type === 'run-end') ended.set(event.run.id, performance.now());
    else if (event.event.type === 'notification-deliver') {
      const at = ended.get(event.run.id);
      ended.delete(event.run.id);
      if (at !== undefined) latencies.push(performance.now() - at);
    }
  });
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
  const cadre = createCadre({ store: createSqliteStore({ path }), model, agents: [workerAgent], tools: { noop: noopTool }, limits: { maxActiveGlobal }, onError: errors.report });
  const latencies = trackNotificationLatency(cadre);
  try {
    const probe = probeMemory();
    const sessions = await Promise.all(Array.from({ length: options.parents }, () => cadre.createSession()));
    const elapsed = startClock();
    const turns = await Promise.all(sessions.map((session) => cadre.send(session.id, 'Start the background work.')));
    // One waiter at a time: every waiter listens to every event, so thousands at once would measure the waiting.
    for (const session of sessions) await cadre.waitForIdle(session.id);
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
    ['implementation', 'maxActiveGlobal', 'model calls', 'wall s', 'turns/s', 'turns per CPU s', 'peak RSS MB', 'peak heap MB', 'notification p50 / p99 / max ms', 'runs not completed', 'notifications missing'],
    rows,
  );
  const setup = `${options.parents} parents × ${options.runsPerParent} background runs of ${options.toolCalls + 1} turns; maxActivePerParent 5 (default); latency from each run's \`run-end\` event to its \`notification-deliver\` event. The AI SDK rows run the same ${runs} subagent loops with that many at a time, without parents or persistence.`;
  return `### Lifecycle\n\n${setup}\n\n${table}\n`;
}

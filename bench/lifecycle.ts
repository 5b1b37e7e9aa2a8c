import { join } from 'node:path';
import { createCadre, type Cadre } from '../src/runtime/create-cadre.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { createBenchModel } from './bench-model.ts';
import { createErrorSink, noopTool, workerAgent } from './bench-tools.ts';
import { fixed, markdownTable, probeMemory, quantile, temporaryFolder } from './measure.ts';

/** Sizes of the lifecycle benchmark. */
export interface LifecycleOptions {
  /** Parent sessions, all started at once. */
  parents: number;
  /** Background runs each parent starts in its first model call. */
  runsPerParent: number;
  /** `noop` calls per run before its short answer (turns per run = toolCalls + 1). */
  toolCalls: number;
  /** `limits.maxActiveGlobal`; `maxActivePerParent` stays at its default of 5. */
  maxActiveGlobal: number;
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

/**
 * Lifecycle: `parents` sessions each start `runsPerParent` background runs of `toolCalls + 1`
 * turns, answer "started", and auto-resume when the notifications arrive. All sessions are sent
 * their message at once, then awaited until idle. Afterwards every run must be finished with its
 * notification delivered, read back from the database file. Returns the Markdown report.
 */
export async function runLifecycle(options: LifecycleOptions): Promise<string> {
  const folder = temporaryFolder('cadre-bench-lifecycle');
  const path = join(folder.path, 'cadre.db');
  const model = createBenchModel({ fanOut: options.runsPerParent, background: true, toolCalls: options.toolCalls, answerChars: 40 });
  const errors = createErrorSink();
  const limits = { maxActiveGlobal: options.maxActiveGlobal };
  const cadre = createCadre({ store: createSqliteStore({ path }), model, agents: [workerAgent], tools: { noop: noopTool }, limits, onError: errors.report });
  const latencies = trackNotificationLatency(cadre);
  try {
    const probe = probeMemory();
    const sessions = await Promise.all(Array.from({ length: options.parents }, () => cadre.createSession()));
    const started = performance.now();
    const turns = await Promise.all(sessions.map((session) => cadre.send(session.id, 'Start the background work.')));
    // One waiter at a time: every waiter listens to every event, so thousands at once would measure the waiting.
    for (const session of sessions) await cadre.waitForIdle(session.id);
    const seconds = (performance.now() - started) / 1000;
    const peakMb = probe.stop();
    errors.check('lifecycle');
    const failedTurns = turns.filter((turn) => turn.status !== 'completed').length;
    await cadre.close();
    await cadre.store.close();

    const reader = createSqliteStore({ path });
    const runs = await reader.listRuns({});
    await reader.close();
    const unfinished = runs.filter((run) => run.status !== 'completed').length;
    const undelivered = runs.filter((run) => !run.notification?.delivered_at).length;
    const expectedRuns = options.parents * options.runsPerParent;
    const subagentCalls = expectedRuns * (options.toolCalls + 1);

    const table = markdownTable(
      ['runs (parents × runs)', 'model calls (subagent + parent)', 'wall s', 'turns/s', 'peak RSS MB', 'notification p50 / p99 / max ms', 'runs not completed', 'notifications missing'],
      [[
        `${runs.length} (${options.parents} × ${options.runsPerParent})`,
        `${model.calls} (${subagentCalls} + ${model.calls - subagentCalls})`,
        fixed(seconds, 2),
        fixed(model.calls / seconds),
        `${fixed(peakMb)} (start ${fixed(probe.startMb)})`,
        `${fixed(quantile(latencies, 0.5), 1)} / ${fixed(quantile(latencies, 0.99), 1)} / ${fixed(Math.max(...latencies), 1)}`,
        unfinished + Math.max(0, expectedRuns - runs.length),
        undelivered + failedTurns,
      ]],
    );
    const setup = `limits: maxActivePerParent=${cadre.limits.maxActivePerParent} (default), maxActiveGlobal=${cadre.limits.maxActiveGlobal}; latencies measured for ${latencies.length} runs.`;
    return `### Lifecycle\n\n${table}\n\n${setup}\n`;
  } finally {
    await cadre.close();
    folder.remove();
  }
}

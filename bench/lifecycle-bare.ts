import { createBenchModel } from './bench-model.ts';
import { noopTool, workerSystem } from './bench-tools.ts';
import { bareLoop, type BareCall } from './fanout-bare.ts';
import { probeMemory, startClock, type MemoryPeaks } from './measure.ts';

/** What the AI SDK alone achieves on the lifecycle's subagent work. */
export interface BareLifecycleResult {
  call: BareCall;
  concurrency: number;
  calls: number;
  wallMs: number;
  cpuMs: number;
  memory: MemoryPeaks;
}

/**
 * The ceiling for the lifecycle benchmark: the same `runs` subagent loops (`toolCalls` noop
 * steps, then a short answer) on the AI SDK alone, `concurrency` at a time, with no parents,
 * no persistence and no notifications.
 */
export async function runBareLifecycle({
  call,
  runs,
  toolCalls,
  concurrency,
}: {
  call: BareCall;
  runs: number;
  toolCalls: number;
  concurrency: number;
}): Promise<BareLifecycleResult> {
  const model = createBenchModel({ fanOut: 0, background: true, toolCalls, answerChars: 40 });
  const probe = probeMemory();
  const elapsed = startClock();
  let started = 0;
  const worker = async () => {
    while (started < runs) {
      started++;
      await bareLoop(call, model, workerSystem, `Task ${started}: check part ${started}.`, { noop: noopTool }, toolCalls + 1);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, runs) }, worker));
  const { wallMs, cpuMs } = elapsed();
  return { call, concurrency, calls: model.calls, wallMs, cpuMs, memory: probe.stop() };
}

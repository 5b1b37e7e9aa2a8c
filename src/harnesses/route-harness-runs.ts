import type { RunExecutor } from '../runs/run-executor.ts';
import type { RunRecord } from '../store/records.ts';

/**
 * The executor of a runtime with agent programs: runs of a `harness:` agent go to `harness`, the
 * others to `loop` (cadre's own). Which one is decided when the run starts, from its agent.
 */
export function routeHarnessRuns(loop: RunExecutor, harness: RunExecutor, isHarnessRun: (run: RunRecord) => boolean): RunExecutor {
  return {
    execute(run, signal, context) {
      return (isHarnessRun(run) ? harness : loop).execute(run, signal, context);
    },
  };
}

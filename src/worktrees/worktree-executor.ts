import type { RunExecutor } from '../runs/run-executor.ts';
import { RunDetachSignal } from '../runs/run-stop.ts';
import type { Store } from '../store/store.ts';
import type { RunWorktrees } from './run-worktrees.ts';

/** Options of {@link withRunWorktrees}. */
export interface RunWorktreesExecutorOptions {
  worktrees: RunWorktrees;
  store: Pick<Store, 'getRun' | 'updateRun'>;
  onError: (error: unknown) => void;
}

/**
 * The executor seam for runs with a worktree of their own: the run is carried out with its
 * worktree as its place (`RunPlace.cwd`, and the git folders it may write), and once it ended,
 * whatever status it ends with, its changes are committed on its branch and the record's
 * `worktree` gets the commit and the counts (null when it changed nothing: no worktree and no
 * branch are left). A run handed over to another process (this one shuts down) keeps its worktree
 * as it is; so does one another process finished already.
 */
export function withRunWorktrees(executor: RunExecutor, { worktrees, store, onError }: RunWorktreesExecutorOptions): RunExecutor {
  return {
    async execute(run, signal, context) {
      if (!run.worktree) return executor.execute(run, signal, context);
      const place = context?.place;
      const [cwd, git] = await Promise.all([worktrees.workingDirectory(run.worktree), worktrees.gitPaths(run.worktree)]);
      const outcome = await executor.execute(run, signal, {
        ...context,
        place: {
          ...place,
          cwd,
          writable: [...(place?.writable ?? []), ...git.writable],
          readable: [...(place?.readable ?? []), ...git.readable],
        },
      });
      if (outcome.abandoned !== undefined || (signal.aborted && RunDetachSignal.isInstance(signal.reason))) return outcome;
      try {
        const current = await store.getRun(run.id);
        if (!current?.worktree || current.worktree.commit !== null) return outcome;
        const worktree = await worktrees.finish({ id: run.id, description: run.description, worktree: current.worktree });
        await store.updateRun(run.id, { worktree });
      } catch (error) {
        // The run's work stands; its worktree stays as it is, for a person to commit or merge.
        onError(error);
      }
      return outcome;
    },
  };
}

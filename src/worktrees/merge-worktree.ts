import type { RunWorktree } from '../store/records.ts';
import { runGit } from './git.ts';
import { identityOptions, noSigning } from './repository.ts';
import type { RunWorktrees, WorktreeRun } from './run-worktrees.ts';
import { WorktreeError } from './worktree-error.ts';

/** Options of {@link mergeRunWorktree}. */
export interface MergeWorktreeOptions {
  /** One plain commit of the run's changes instead of a merge commit; the worktree and branch are kept. @default false */
  squash?: boolean;
  /** The merge's time, for the record's `merged_at`. */
  at: string;
}

/** Paths of `git status --porcelain -z` entries (both sides of a rename). */
function statusPaths(output: string): Set<string> {
  const paths = new Set<string>();
  for (const entry of output.split('\0')) if (entry.length > 3) paths.add(entry.slice(3));
  return paths;
}

/**
 * Merges a finished run's branch into the workspace's current branch (docs/worktrees.md): what the
 * run left uncommitted is committed first; a merge commit (or with `squash`, one plain commit)
 * leaves a clean tree, and without `squash` the merged worktree and branch are removed. A merge
 * that would conflict, or touch files the workspace has changed, changes nothing.
 * @throws {WorktreeError} `conflict` (with `files`), `not_found`, or `git`.
 * @returns the worktree as the record should now hold it.
 */
export async function mergeRunWorktree(worktrees: RunWorktrees, run: WorktreeRun, { squash = false, at }: MergeWorktreeOptions): Promise<RunWorktree> {
  const finished = (await worktrees.finish(run)) ?? run.worktree;
  const { branch, base } = finished;
  return worktrees.exclusive(async ({ top }) => {
    const exists = await runGit(top, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { allowFailure: true });
    if (exists.code !== 0)
      throw new WorktreeError('not_found', `Run ${run.id} has no branch ${branch} any more (it changed nothing, or its worktree was removed).`);
    const merged = (await runGit(top, ['merge-base', '--is-ancestor', branch, 'HEAD'], { allowFailure: true })).code === 0;
    if (!merged) {
      const trial = await runGit(top, ['merge-tree', '--write-tree', '--name-only', '--no-messages', 'HEAD', branch], { allowFailure: true });
      if (trial.code === 1) {
        const files = trial.stdout
          .split('\n')
          .slice(1)
          .filter((line) => line.trim() !== '');
        throw new WorktreeError(
          'conflict',
          `Merging ${branch} would conflict in ${files.join(', ')}; nothing was changed. Resolve it by hand (git merge ${branch}) or remove the worktree.`,
          { files },
        );
      }
      if (trial.code !== 0) throw new WorktreeError('git', `git merge-tree failed: ${trial.stderr.trim()}`);
      const touched = (await runGit(top, ['diff', '--name-only', '-z', base, branch])).stdout.split('\0').filter(Boolean);
      const dirty = statusPaths((await runGit(top, ['status', '--porcelain', '-z', '--untracked-files=all'])).stdout);
      const clash = touched.filter((path) => dirty.has(path));
      if (clash.length > 0) {
        throw new WorktreeError(
          'conflict',
          `The workspace has uncommitted changes in ${clash.join(', ')}, which ${branch} changes too; commit or stash them first. Nothing was changed.`,
          { files: clash },
        );
      }
      const identity = await identityOptions(top);
      const title = `${branch}: ${run.description}`;
      if (squash) {
        await runGit(top, ['merge', '--squash', '--quiet', branch]);
        await runGit(top, [...noSigning, ...identity, 'commit', '--no-verify', '-q', '-m', title, '--', ...touched]);
      } else {
        await runGit(top, [...noSigning, ...identity, 'merge', '--no-ff', '--no-verify', '--quiet', '-m', `Merge ${title}`, branch]);
      }
    }
    if (squash) return { ...finished, merged_at: at };
    await runGit(top, ['worktree', 'remove', '--force', finished.path], { allowFailure: true });
    await runGit(top, ['worktree', 'prune']);
    await runGit(top, ['branch', '-D', branch], { allowFailure: true });
    return { ...finished, merged_at: at, removed_at: at };
  });
}

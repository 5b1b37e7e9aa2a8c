import { existsSync } from 'node:fs';
import type { RunWorktree } from '../store/records.ts';
import { runGit } from './git.ts';
import type { RunWorktrees, WorktreeRun } from './run-worktrees.ts';
import { WorktreeError } from './worktree-error.ts';

/**
 * Removes a run's worktree and its branch (docs/worktrees.md). Changes that are not merged (a
 * branch ahead of the workspace's `HEAD`, or files the run left uncommitted) are refused unless
 * `force`.
 * @throws {WorktreeError} `unmerged` when it would lose changes, `not_found` when nothing is left to remove.
 * @returns the worktree as the record should now hold it.
 */
export function removeRunWorktree(worktrees: RunWorktrees, run: WorktreeRun, { force = false, at }: { force?: boolean; at: string }): Promise<RunWorktree> {
  const { path, branch } = run.worktree;
  return worktrees.exclusive(async ({ top }) => {
    const hasBranch = (await runGit(top, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { allowFailure: true })).code === 0;
    const hasFolder = existsSync(path);
    if (!hasBranch && !hasFolder) throw new WorktreeError('not_found', `Run ${run.id} has no worktree or branch left to remove.`);
    if (!force && !run.worktree.merged_at) {
      const dirty = hasFolder && (await runGit(path, ['status', '--porcelain'])).stdout.trim() !== '';
      const ahead = hasBranch && (await runGit(top, ['merge-base', '--is-ancestor', branch, 'HEAD'], { allowFailure: true })).code !== 0;
      if (dirty || ahead) {
        throw new WorktreeError(
          'unmerged',
          `Run ${run.id}'s worktree has changes that are not merged${dirty ? ' (some not even committed)' : ''}: merge them with cadre worktree merge ${run.id}, or remove them anyway with --force.`,
        );
      }
    }
    if (hasFolder) await runGit(top, ['worktree', 'remove', '--force', path]);
    await runGit(top, ['worktree', 'prune']);
    if (hasBranch) await runGit(top, ['branch', '-D', branch]);
    return { ...run.worktree, removed_at: at };
  });
}

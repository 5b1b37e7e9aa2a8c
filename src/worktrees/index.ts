export { createRunWorktrees, parseShortstat, type RunWorktrees, type WorktreeChanges, type WorktreeRun, type WorktreeSettings } from './run-worktrees.ts';
export { mergeRunWorktree, type MergeWorktreeOptions } from './merge-worktree.ts';
export { removeRunWorktree } from './remove-worktree.ts';
export { withRunWorktrees, type RunWorktreesExecutorOptions } from './worktree-executor.ts';
export { WorktreeError, type WorktreeErrorKind } from './worktree-error.ts';
export {
  diffOfRun,
  listRunWorktrees,
  mergeWorktreeOfRun,
  removeWorktreeOfRun,
  worktreeLine,
  worktreesOf,
  type WorktreeEntry,
  type WorktreeRecordsContext,
} from './worktree-records.ts';

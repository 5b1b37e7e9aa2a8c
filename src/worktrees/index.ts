export {
  createRunWorktrees,
  parseNumstat,
  parseShortstat,
  type ChangedFile,
  type RunWorktrees,
  type WorktreeChanges,
  type WorktreeRun,
  type WorktreeSettings,
} from './run-worktrees.ts';
export { mergeRunWorktree, type MergeWorktreeOptions } from './merge-worktree.ts';
export { removeRunWorktree } from './remove-worktree.ts';
export { withRunWorktrees, type RunWorktreesExecutorOptions } from './worktree-executor.ts';
export { WorktreeError, type WorktreeErrorKind } from './worktree-error.ts';
export {
  changesOfRun,
  listRunWorktrees,
  mergeWorktreeOfRun,
  removeWorktreeOfRun,
  worktreeLine,
  worktreesOf,
  type WorktreeChangesView,
  type WorktreeEntry,
  type WorktreeRecordsContext,
} from './worktree-records.ts';

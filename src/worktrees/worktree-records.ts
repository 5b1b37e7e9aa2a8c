import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { isFinished, type RunRecord, type RunStatus, type RunWorktree } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { mergeRunWorktree } from './merge-worktree.ts';
import { removeRunWorktree } from './remove-worktree.ts';
import { createRunWorktrees, type ChangedFile, type RunWorktrees, type WorktreeRun } from './run-worktrees.ts';
import { WorktreeError } from './worktree-error.ts';

/** A run's worktree as `cadre worktrees` and `cadre.worktrees()` list it. */
export interface WorktreeEntry extends RunWorktree {
  run_id: string;
  agent: string;
  description: string;
  status: RunStatus;
  /** Whether its folder is still there (a merged one is removed; its branch may stay after a squash). */
  exists: boolean;
}

/** What the record-keeping worktree operations need. */
export interface WorktreeRecordsContext {
  store: Pick<Store, 'getRun' | 'listRuns' | 'updateRun'>;
  now: () => string;
}

/** The worktrees of the workspace a run's worktree was made in (`<workspace>/.cadre/worktrees/<run_id>`), from any folder. */
export function worktreesOf(worktree: RunWorktree): RunWorktrees {
  return createRunWorktrees({ workspace: resolve(worktree.path, '..', '..', '..') });
}

/** The worktrees of runs that are not removed yet, newest first. */
export async function listRunWorktrees(store: Pick<Store, 'listRuns'>): Promise<WorktreeEntry[]> {
  const runs = await store.listRuns({ worktree: true });
  return runs
    .filter((run): run is RunRecord & { worktree: RunWorktree } => run.worktree !== null && !run.worktree.removed_at)
    .map((run) => ({
      run_id: run.id,
      agent: run.agent,
      description: run.description,
      status: run.status,
      ...run.worktree,
      exists: existsSync(run.worktree.path),
    }));
}

/** The run of `runId` with a worktree, finished. */
async function finishedRun(context: WorktreeRecordsContext, runId: string, doing: string): Promise<WorktreeRun> {
  const run = await context.store.getRun(runId);
  if (!run) throw new WorktreeError('not_found', `No run '${runId}'.`);
  if (!run.worktree) throw new WorktreeError('not_found', `Run ${runId} has no worktree (it ran without isolation, or changed nothing).`);
  if (!isFinished(run.status))
    throw new WorktreeError('busy', `Run ${runId} is still ${run.status}; wait for it or stop it (cadre stop ${runId}) before you ${doing} its worktree.`);
  if (run.worktree.removed_at) throw new WorktreeError('not_found', `Run ${runId}'s worktree was removed already.`);
  return { id: run.id, description: run.description, worktree: run.worktree };
}

/** Merges a finished run's worktree into the workspace's branch and records `merged_at` (see {@link mergeRunWorktree}). */
export async function mergeWorktreeOfRun(context: WorktreeRecordsContext, runId: string, { squash = false }: { squash?: boolean } = {}): Promise<RunWorktree> {
  const run = await finishedRun(context, runId, 'merge');
  const worktree = await mergeRunWorktree(worktreesOf(run.worktree), run, { squash, at: context.now() });
  await context.store.updateRun(runId, { worktree });
  return worktree;
}

/** Removes a finished run's worktree and branch and records it (see {@link removeRunWorktree}). */
export async function removeWorktreeOfRun(context: WorktreeRecordsContext, runId: string, { force = false }: { force?: boolean } = {}): Promise<RunWorktree> {
  const run = await finishedRun(context, runId, 'remove');
  const worktree = await removeRunWorktree(worktreesOf(run.worktree), run, { force, at: context.now() });
  await context.store.updateRun(runId, { worktree });
  return worktree;
}

/** What a run changed in its worktree against its base (uncommitted changes too). */
export interface WorktreeChangesView {
  run_id: string;
  worktree: RunWorktree;
  /** Each file it changed, with its lines added and removed. */
  files: ChangedFile[];
  /** The unified diff. */
  diff: string;
}

/** What a run changed in its worktree, as a unified diff against its base and per file (uncommitted changes too). */
export async function changesOfRun(store: Pick<Store, 'getRun'>, runId: string): Promise<WorktreeChangesView> {
  const run = await store.getRun(runId);
  if (!run) throw new WorktreeError('not_found', `No run '${runId}'.`);
  if (!run.worktree) throw new WorktreeError('not_found', `Run ${runId} has no worktree (it ran without isolation, or changed nothing).`);
  if (run.worktree.removed_at) throw new WorktreeError('not_found', `Run ${runId}'s worktree was removed.`);
  return { run_id: run.id, worktree: run.worktree, ...(await worktreesOf(run.worktree).diff(run.worktree)) };
}

/** The line the parent's output gains: `worktree: cadre/<run_id> (N files changed, +I -D)`. */
export function worktreeLine(worktree: RunWorktree): string {
  const files = `${worktree.files_changed} ${worktree.files_changed === 1 ? 'file' : 'files'} changed`;
  return `worktree: ${worktree.branch} (${files}, +${worktree.insertions} -${worktree.deletions})`;
}

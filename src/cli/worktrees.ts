import type { RunWorktree } from '../store/records.ts';
import { systemNow } from '../util/clock.ts';
import { changesOfRun, listRunWorktrees, mergeWorktreeOfRun, removeWorktreeOfRun, worktreeLine, type WorktreeEntry } from '../worktrees/worktree-records.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { StoreFlags } from './command-options.ts';
import { openCliStore } from './open-runtime.ts';
import { formatTable } from './run-lines.ts';

/** What a worktree holds, in a few words: its changes, or what became of it. */
function changesOf(entry: WorktreeEntry): string {
  const changes = entry.commit
    ? worktreeLine(entry).replace(/^worktree: \S+ \((.*)\)$/, '$1')
    : entry.status === 'running' || entry.status === 'queued'
      ? 'working'
      : 'not committed';
  const notes = [...(entry.merged_at ? ['merged'] : []), ...(entry.exists ? [] : ['no folder'])];
  return notes.length > 0 ? `${changes} (${notes.join(', ')})` : changes;
}

/** `cadre worktrees [--json]`: the runs' worktrees that are not removed, newest first. */
export async function worktreesCommand(context: CliContext, flags: StoreFlags): Promise<number> {
  const { store, close } = await openCliStore(context, flags);
  try {
    const entries = await listRunWorktrees(store);
    if (flags.json) {
      writeLine(context.stdout, JSON.stringify(entries));
      return 0;
    }
    if (entries.length === 0) {
      writeLine(context.stdout, 'No worktrees. A run gets one with isolation: worktree (see docs/worktrees.md).');
      return 0;
    }
    writeLine(
      context.stdout,
      formatTable(
        ['RUN', 'AGENT', 'STATUS', 'BRANCH', 'CHANGES'],
        entries.map((entry) => [entry.run_id, entry.agent, entry.status, entry.branch, changesOf(entry)]),
      ),
    );
    return 0;
  } finally {
    await close();
  }
}

/** `cadre worktree diff RUN_ID`: what the run changed against its base. */
export async function worktreeDiffCommand(context: CliContext, runId: string, flags: StoreFlags): Promise<number> {
  const { store, close } = await openCliStore(context, flags);
  try {
    const changes = await changesOfRun(store, runId);
    if (flags.json) writeLine(context.stdout, JSON.stringify(changes));
    else context.stdout.write(changes.diff);
    return 0;
  } finally {
    await close();
  }
}

function report(context: CliContext, flags: StoreFlags, runId: string, worktree: RunWorktree, done: string): void {
  if (flags.json) writeLine(context.stdout, JSON.stringify({ run_id: runId, worktree }));
  else writeLine(context.stdout, done);
}

/** `cadre worktree merge RUN_ID [--squash]`: into the workspace's current branch; a conflict changes nothing (exit 1). */
export async function worktreeMergeCommand(context: CliContext, runId: string, flags: StoreFlags & { squash?: boolean }): Promise<number> {
  const { store, close } = await openCliStore(context, flags, { writes: true });
  try {
    const worktree = await mergeWorktreeOfRun({ store, now: systemNow }, runId, { squash: flags.squash === true });
    const kept = worktree.removed_at ? 'its worktree and branch removed' : `branch ${worktree.branch} kept`;
    report(context, flags, runId, worktree, `Merged ${worktreeLine(worktree).slice('worktree: '.length)}${flags.squash ? ' as one commit' : ''}; ${kept}.`);
    return 0;
  } finally {
    await close();
  }
}

/** `cadre worktree remove RUN_ID [--force]`: the worktree and its branch; unmerged changes need `--force`. */
export async function worktreeRemoveCommand(context: CliContext, runId: string, flags: StoreFlags & { force?: boolean }): Promise<number> {
  const { store, close } = await openCliStore(context, flags, { writes: true });
  try {
    const worktree = await removeWorktreeOfRun({ store, now: systemNow }, runId, { force: flags.force === true });
    report(context, flags, runId, worktree, `Removed ${worktree.path} and branch ${worktree.branch}.`);
    return 0;
  } finally {
    await close();
  }
}

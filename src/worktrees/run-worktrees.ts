import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { RunWorktree } from '../store/records.ts';
import { oneAtATime, runGit } from './git.ts';
import { excludeWorktrees, identityOptions, noSigning, readRepository, type Repository } from './repository.ts';
import { WorktreeError } from './worktree-error.ts';

/** The `worktree` key of the configuration. */
export interface WorktreeSettings {
  /** The commit, branch or tag a run's branch is made from. @default 'HEAD' */
  baseRef?: string;
}

/** What a finished run changed, as `git diff --shortstat` counts it against its base. */
export interface WorktreeChanges {
  files_changed: number;
  insertions: number;
  deletions: number;
}

/** One file a run changed, as `git diff --numstat` counts it (a binary file counts 0 lines). */
export interface ChangedFile {
  path: string;
  insertions: number;
  deletions: number;
}

/** Parses `git diff --numstat -z`: `added\tdeleted\tpath\0` (a rename: `added\tdeleted\t\0from\0to\0`). */
export function parseNumstat(text: string): ChangedFile[] {
  const fields = text.split('\0');
  const files: ChangedFile[] = [];
  for (let index = 0; index < fields.length; index++) {
    const match = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(fields[index]);
    if (!match) continue;
    let path = match[3];
    // A rename names both paths after it: the new one counts.
    if (path === '') path = fields[(index += 2)] ?? '';
    files.push({ path, insertions: match[1] === '-' ? 0 : Number(match[1]), deletions: match[2] === '-' ? 0 : Number(match[2]) });
  }
  return files;
}

/** A run as the worktree operations need it. */
export interface WorktreeRun {
  id: string;
  description: string;
  worktree: RunWorktree;
}

/** The git worktrees of the runs of one workspace (docs/worktrees.md). */
export interface RunWorktrees {
  /** The workspace folder whose repository holds the worktrees. */
  readonly workspace: string;
  /** The repository, or a {@link WorktreeError} `not_a_repository` saying the workspace is in none. */
  repository(): Promise<Repository>;
  /** Makes `.cadre/worktrees/<run_id>` on a new branch `cadre/<run_id>` from `from` (a commit). @default from `baseRef` */
  create(runId: string, from?: string): Promise<RunWorktree>;
  /**
   * The worktree a follow-up run goes on in (docs/worktrees.md): the earlier run's, where it is
   * still there with its branch and not merged (`fresh: false`); else a new one for `runId` made
   * from the earlier branch's tip (its commit, where git still has it; else `baseRef`).
   */
  follow(earlier: RunWorktree, runId: string): Promise<{ worktree: RunWorktree; fresh: boolean }>;
  /** Where the run works: the workspace's place inside its worktree. */
  workingDirectory(worktree: RunWorktree): Promise<string>;
  /**
   * The git folders a command in the worktree writes to (its own git folder, the objects, its
   * branch's ref) and the repository's git folder it reads, so git works inside the sandbox.
   */
  gitPaths(worktree: RunWorktree): Promise<{ writable: string[]; readable: string[] }>;
  /**
   * Commits what the run left uncommitted on its branch and counts its changes; a run that changed
   * nothing (tip at base, clean tree) leaves no worktree and no branch and gets null.
   */
  finish(run: WorktreeRun): Promise<RunWorktree | null>;
  /** What the run changed against its base (committed and not): a unified diff and each file's counts. */
  diff(worktree: RunWorktree): Promise<{ diff: string; files: ChangedFile[] }>;
  /** Runs `operation` while no other cadre git operation of this process is under way on the repository. */
  exclusive<T>(operation: (repository: Repository) => Promise<T>): Promise<T>;
}

/** Parses `git diff --shortstat`: ` 2 files changed, 3 insertions(+), 1 deletion(-)`. */
export function parseShortstat(text: string): WorktreeChanges {
  const count = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  return { files_changed: count(/(\d+) files? changed/), insertions: count(/(\d+) insertions?\(\+\)/), deletions: count(/(\d+) deletions?\(-\)/) };
}

/** Creates the {@link RunWorktrees} of a workspace. */
export function createRunWorktrees({ workspace, baseRef = 'HEAD' }: { workspace: string } & WorktreeSettings): RunWorktrees {
  const root = resolve(workspace);
  let known: Promise<Repository | null> | undefined;
  const repository = async () => {
    known ??= readRepository(root);
    const found = await known;
    if (!found) {
      known = undefined;
      throw new WorktreeError(
        'not_a_repository',
        `The workspace ${root} is not a git repository, so a run cannot get a worktree of its own (isolation: worktree). Run without isolation, or run git init and commit first.`,
      );
    }
    return found;
  };
  const exclusive = async <T>(operation: (repository: Repository) => Promise<T>) => {
    const found = await repository();
    return oneAtATime(found.commonDir, () => operation(found));
  };

  async function commitLeftovers(run: WorktreeRun): Promise<void> {
    const { path } = run.worktree;
    await runGit(path, ['add', '-A']);
    const staged = await runGit(path, ['diff', '--cached', '--quiet'], { allowFailure: true });
    if (staged.code === 0) return;
    const message = `cadre run ${run.id}: ${run.description}`;
    await runGit(path, [...noSigning, ...(await identityOptions(path)), 'commit', '--no-verify', '-q', '-m', message]);
  }

  /** Makes `.cadre/worktrees/<run_id>` on a new branch `cadre/<run_id>` from `from`, else `baseRef`. */
  async function make(found: Repository, runId: string, from?: string): Promise<RunWorktree> {
    const resolved = await runGit(found.top, ['rev-parse', '--verify', '--quiet', `${from ?? baseRef}^{commit}`], { allowFailure: true });
    const base = resolved.stdout.trim();
    if (resolved.code !== 0 || base === '') {
      throw new WorktreeError(
        'no_commit',
        baseRef === 'HEAD'
          ? `The repository of ${root} has no commit yet, so there is nothing to make a worktree from: commit first.`
          : `worktree.baseRef '${baseRef}' is no commit of the repository of ${root}.`,
      );
    }
    await excludeWorktrees(found);
    const path = join(root, '.cadre', 'worktrees', runId);
    const branch = `cadre/${runId}`;
    await runGit(found.top, ['worktree', 'add', '--quiet', '-b', branch, path, base]);
    return { path, branch, base, commit: null, files_changed: 0, insertions: 0, deletions: 0 };
  }

  return {
    workspace: root,
    repository,
    exclusive,

    create: (runId, from) => exclusive((found) => make(found, runId, from)),

    async follow(earlier, runId) {
      const kept = await exclusive(async (found) => {
        if (earlier.merged_at || earlier.removed_at || !existsSync(earlier.path)) return false;
        const branch = await runGit(found.top, ['rev-parse', '--verify', '--quiet', `refs/heads/${earlier.branch}`], { allowFailure: true });
        const checkedOut = await runGit(earlier.path, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { allowFailure: true });
        return branch.code === 0 && checkedOut.code === 0 && checkedOut.stdout.trim() === earlier.branch;
      });
      // Its base stays: the branch's changes, the earlier run's and this one's, count against it.
      if (kept) return { worktree: { ...earlier, commit: null, files_changed: 0, insertions: 0, deletions: 0 }, fresh: false };
      const tip = earlier.commit ?? earlier.branch;
      return exclusive(async (found) => {
        const known = await runGit(found.top, ['rev-parse', '--verify', '--quiet', `${tip}^{commit}`], { allowFailure: true });
        return { worktree: await make(found, runId, known.code === 0 ? known.stdout.trim() : undefined), fresh: true };
      });
    },

    async workingDirectory(worktree) {
      const { prefix } = await repository();
      return prefix === '' ? worktree.path : join(worktree.path, prefix);
    },

    async gitPaths(worktree) {
      const { commonDir } = await repository();
      const pointer = await readFile(join(worktree.path, '.git'), 'utf8').catch(() => '');
      const own = /^gitdir: (.+)$/m.exec(pointer)?.[1]?.trim();
      const branch = worktree.branch.split('/').slice(0, -1).join('/');
      const writable = [
        ...(own ? [resolve(worktree.path, own)] : []),
        join(commonDir, 'objects'),
        join(commonDir, 'refs', 'heads', branch),
        join(commonDir, 'logs', 'refs', 'heads', branch),
      ].filter((path) => existsSync(path));
      return { writable, readable: [commonDir] };
    },

    finish: (run) =>
      exclusive(async (found) => {
        const { path, base, branch } = run.worktree;
        if (!existsSync(path)) return run.worktree;
        await commitLeftovers(run);
        const tip = (await runGit(path, ['rev-parse', 'HEAD'])).stdout.trim();
        if (tip === base) {
          await runGit(found.top, ['worktree', 'remove', '--force', path]);
          await runGit(found.top, ['branch', '-D', branch], { allowFailure: true });
          return null;
        }
        const stat = await runGit(path, ['diff', '--shortstat', base, tip]);
        return { ...run.worktree, commit: tip, ...parseShortstat(stat.stdout) };
      }),

    diff: (worktree) =>
      exclusive(async (found) => {
        const there = existsSync(worktree.path);
        // Files the run left uncommitted count too (a run still working, or one that was abandoned).
        if (there) await runGit(worktree.path, ['add', '-A', '--intent-to-add']);
        const cwd = there ? worktree.path : found.top;
        const against = there ? [worktree.base] : [worktree.base, worktree.commit ?? worktree.branch];
        const [diff, numstat] = await Promise.all([runGit(cwd, ['diff', ...against]), runGit(cwd, ['diff', '--numstat', '-z', ...against])]);
        return { diff: diff.stdout, files: parseNumstat(numstat.stdout) };
      }),
  };
}

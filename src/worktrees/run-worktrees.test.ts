import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mergeRunWorktree } from './merge-worktree.ts';
import { removeRunWorktree } from './remove-worktree.ts';
import { createRunWorktrees, parseNumstat, parseShortstat, type RunWorktrees } from './run-worktrees.ts';
import { worktreeLine } from './worktree-records.ts';
import { WorktreeError } from './worktree-error.ts';

const at = '2025-01-01T00:00:00.000Z';
let repo: string;
let worktrees: RunWorktrees;

/** git in `cwd` with no identity but the one given: HOME points at an empty folder. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...isolatedEnv(), GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@e' },
  });
}

function isolatedEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: join(repo, '..', 'home'), GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
}

async function errorOf(promise: Promise<unknown>): Promise<WorktreeError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!WorktreeError.isInstance(error)) throw new Error(`expected a WorktreeError, got ${String(error)}`);
  return error;
}

beforeEach(() => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'cadre-worktrees-')));
  repo = join(base, 'repo');
  execFileSync('mkdir', ['-p', repo, join(base, 'home')]);
  // cadre's git commands see this HOME too: no global identity, no global hooks.
  process.env.HOME = join(base, 'home');
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'first');
  worktrees = createRunWorktrees({ workspace: repo });
});

const home = process.env.HOME;
afterEach(() => {
  process.env.HOME = home;
  rmSync(join(repo, '..'), { recursive: true, force: true });
});

describe('run worktrees', () => {
  it('makes .cadre/worktrees/<run_id> on branch cadre/<run_id> from HEAD and keeps it out of git status', async () => {
    const worktree = await worktrees.create('run_1');
    expect(worktree).toMatchObject({
      path: join(repo, '.cadre', 'worktrees', 'run_1'),
      branch: 'cadre/run_1',
      base: git(repo, 'rev-parse', 'HEAD').trim(),
      commit: null,
    });
    expect(readFileSync(join(worktree.path, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(git(worktree.path, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('cadre/run_1');
    expect(readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8')).toContain('/.cadre/worktrees/\n');
    await worktrees.create('run_2');
    expect(readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8').match(/\.cadre\/worktrees/g)).toHaveLength(1);
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  it('refuses a workspace that is no git repository, saying so', async () => {
    const plain = mkdtempSync(join(tmpdir(), 'cadre-plain-'));
    try {
      const error = await errorOf(createRunWorktrees({ workspace: plain }).create('run_1'));
      expect(error.kind).toBe('not_a_repository');
      expect(error.message).toContain('is not a git repository');
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });

  it('commits what the run changed on its branch at its end, with cadre <cadre@localhost> where no identity is set, hooks skipped', async () => {
    writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const worktree = await worktrees.create('run_1');
    writeFileSync(join(worktree.path, 'a.txt'), 'one\nTWO\nthree\n');
    writeFileSync(join(worktree.path, 'b.txt'), 'new\n');
    const finished = await worktrees.finish({ id: 'run_1', description: 'edit a', worktree });
    expect(finished).toMatchObject({ files_changed: 2, insertions: 3, deletions: 1, commit: git(worktree.path, 'rev-parse', 'HEAD').trim() });
    expect(git(repo, 'log', '-1', '--format=%an <%ae> %s', 'cadre/run_1').trim()).toBe('cadre <cadre@localhost> cadre run run_1: edit a');
    expect(git(worktree.path, 'status', '--porcelain')).toBe('');
    expect(worktreeLine(finished!)).toBe('worktree: cadre/run_1 (2 files changed, +3 -1)');
  });

  it("uses the workspace's own identity when it has one, and counts commits the run made itself", async () => {
    git(repo, 'config', 'user.name', 'Ada');
    git(repo, 'config', 'user.email', 'ada@example.com');
    const worktree = await worktrees.create('run_1');
    writeFileSync(join(worktree.path, 'c.txt'), 'c\n');
    git(worktree.path, 'add', 'c.txt');
    git(worktree.path, 'commit', '-q', '-m', 'by the run');
    writeFileSync(join(worktree.path, 'd.txt'), 'd\n');
    const finished = await worktrees.finish({ id: 'run_1', description: 'two files', worktree });
    expect(finished).toMatchObject({ files_changed: 2, insertions: 2, deletions: 0 });
    expect(git(repo, 'log', '-1', '--format=%an <%ae>', 'cadre/run_1').trim()).toBe('Ada <ada@example.com>');
    expect(worktreeLine({ ...finished!, files_changed: 1 })).toBe('worktree: cadre/run_1 (1 file changed, +2 -0)');
  });

  it('leaves no worktree and no branch for a run that changed nothing', async () => {
    const worktree = await worktrees.create('run_1');
    expect(await worktrees.finish({ id: 'run_1', description: 'read only', worktree })).toBeNull();
    expect(existsSync(worktree.path)).toBe(false);
    expect(git(repo, 'branch', '--list', 'cadre/*').trim()).toBe('');
    expect(git(repo, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
  });

  it('merges into the current branch with a merge commit, a clean tree, and the worktree removed', async () => {
    const worktree = await worktrees.create('run_1');
    writeFileSync(join(worktree.path, 'b.txt'), 'from the run\n');
    const finished = (await worktrees.finish({ id: 'run_1', description: 'add b', worktree }))!;
    const merged = await mergeRunWorktree(worktrees, { id: 'run_1', description: 'add b', worktree: finished }, { at });
    expect(merged).toMatchObject({ merged_at: at, removed_at: at });
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('from the run\n');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(git(repo, 'log', '-1', '--format=%s %p').trim()).toMatch(/^Merge cadre\/run_1: add b \w+ \w+$/);
    expect(existsSync(worktree.path)).toBe(false);
    expect(git(repo, 'branch', '--list', 'cadre/*').trim()).toBe('');
  });

  it('squashes into one plain commit and keeps the branch', async () => {
    const worktree = await worktrees.create('run_1');
    writeFileSync(join(worktree.path, 'b.txt'), 'b\n');
    writeFileSync(join(worktree.path, 'c.txt'), 'c\n');
    const finished = (await worktrees.finish({ id: 'run_1', description: 'b and c', worktree }))!;
    const merged = await mergeRunWorktree(worktrees, { id: 'run_1', description: 'b and c', worktree: finished }, { squash: true, at });
    expect(merged.merged_at).toBe(at);
    expect(git(repo, 'log', '-1', '--format=%s|%p').trim().split('|')[1].split(' ')).toHaveLength(1);
    expect(git(repo, 'show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort()).toEqual(['b.txt', 'c.txt']);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    // Merged: removing it needs no --force.
    await removeRunWorktree(worktrees, { id: 'run_1', description: 'b and c', worktree: merged }, { at });
    expect(git(repo, 'branch', '--list', 'cadre/*').trim()).toBe('');
  });

  it('changes nothing on a conflict, and names the files', async () => {
    const worktree = await worktrees.create('run_1');
    writeFileSync(join(worktree.path, 'a.txt'), 'one\nfrom the run\n');
    const finished = (await worktrees.finish({ id: 'run_1', description: 'edit a', worktree }))!;
    writeFileSync(join(repo, 'a.txt'), 'one\nfrom the person\n');
    git(repo, 'commit', '-q', '-am', 'person');
    const head = git(repo, 'rev-parse', 'HEAD');
    const error = await errorOf(mergeRunWorktree(worktrees, { id: 'run_1', description: 'edit a', worktree: finished }, { at }));
    expect(error.kind).toBe('conflict');
    expect(error.files).toEqual(['a.txt']);
    expect(error.message).toContain('a.txt');
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\nfrom the person\n');
    expect(existsSync(worktree.path)).toBe(true);
  });

  it('refuses to remove unmerged changes without force, and removes them with it', async () => {
    const worktree = await worktrees.create('run_1');
    writeFileSync(join(worktree.path, 'b.txt'), 'b\n');
    const finished = (await worktrees.finish({ id: 'run_1', description: 'add b', worktree }))!;
    const run = { id: 'run_1', description: 'add b', worktree: finished };
    const error = await errorOf(removeRunWorktree(worktrees, run, { at }));
    expect(error.kind).toBe('unmerged');
    expect(existsSync(worktree.path)).toBe(true);
    expect(await removeRunWorktree(worktrees, run, { force: true, at })).toMatchObject({ removed_at: at });
    expect(existsSync(worktree.path)).toBe(false);
    expect(git(repo, 'branch', '--list', 'cadre/*').trim()).toBe('');
  });

  it("shows the run's changes against its base, uncommitted ones too", async () => {
    const worktree = await worktrees.create('run_1');
    writeFileSync(join(worktree.path, 'b.txt'), 'new file\n');
    writeFileSync(join(worktree.path, 'a.txt'), 'one\n');
    const { diff, files } = await worktrees.diff(worktree);
    expect(diff).toContain('+++ b/b.txt');
    expect(diff).toContain('+new file');
    expect(files).toEqual([
      { path: 'a.txt', insertions: 0, deletions: 1 },
      { path: 'b.txt', insertions: 1, deletions: 0 },
    ]);
  });

  it('reads git shortstat lines', () => {
    expect(parseShortstat(' 1 file changed, 1 insertion(+)')).toEqual({ files_changed: 1, insertions: 1, deletions: 0 });
    expect(parseShortstat(' 3 files changed, 10 insertions(+), 2 deletions(-)')).toEqual({ files_changed: 3, insertions: 10, deletions: 2 });
    expect(parseNumstat('1\t2\ta b.txt\0-\t-\timage.png\0' + '0\t0\t\0old.txt\0new.txt\0')).toEqual([
      { path: 'a b.txt', insertions: 1, deletions: 2 },
      { path: 'image.png', insertions: 0, deletions: 0 },
      { path: 'new.txt', insertions: 0, deletions: 0 },
    ]);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walkFiles } from './walk-files.ts';

let base: string;

async function files(root: string, start = root): Promise<string[]> {
  const found: string[] = [];
  for await (const file of walkFiles(start, { root })) found.push(relative(root, file));
  return found;
}

async function tree(root: string, entries: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(entries)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'cadre-walk-'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('walkFiles', () => {
  it('honours nested .gitignore files like git: directories, globs, and a deeper ! re-include', async () => {
    const root = join(base, 'nested');
    await tree(root, {
      '.gitignore': 'dist/\n*.log\n.venv/\n',
      'dist/bundle.js': 'x',
      '.venv/lib/site.py': 'x',
      'src/a.ts': 'x',
      'src/debug.log': 'x',
      'src/keep/.gitignore': '!important.log\nlocal.txt\n',
      'src/keep/important.log': 'x',
      'src/keep/local.txt': 'x',
      'src/keep/b.ts': 'x',
      'docs/local.txt': 'x',
    });
    expect(await files(root)).toEqual(['.gitignore', 'docs/local.txt', 'src/a.ts', 'src/keep/.gitignore', 'src/keep/b.ts', 'src/keep/important.log']);
  });

  it("skips runs' worktrees under .cadre/worktrees, even with no ignore rule for them", async () => {
    const root = join(base, 'worktrees');
    await tree(root, { 'a.ts': 'x', '.cadre/worktrees/run_1/a.ts': 'x', '.cadre/worktrees/run_1/b.ts': 'x', 'other/worktrees/c.ts': 'x' });
    expect(await files(root)).toEqual(['a.ts', 'other/worktrees/c.ts']);
  });

  it('agrees with git check-ignore on the same tree', async () => {
    const root = join(base, 'git');
    await tree(root, {
      '.gitignore': 'build\n/top-only.txt\n**/tmp/**\n*.o\n!keep.o\n',
      'build/out.txt': 'x',
      'top-only.txt': 'x',
      'sub/top-only.txt': 'x',
      'sub/tmp/t.txt': 'x',
      'a.o': 'x',
      'keep.o': 'x',
      'sub/.gitignore': '*.md\n',
      'sub/readme.md': 'x',
      'readme.md': 'x',
    });
    execFileSync('git', ['init', '-q'], { cwd: root });
    await writeFile(join(root, '.git', 'info', 'exclude'), 'excluded.txt\n');
    await writeFile(join(root, 'excluded.txt'), 'x');
    const listed = execFileSync('git', ['ls-files', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' }).trim().split('\n').sort();
    expect(await files(root)).toEqual(listed);
  });

  it('applies the .gitignore of the directories above a start inside the workspace, but walks a start that is itself ignored', async () => {
    const root = join(base, 'above');
    await tree(root, { '.gitignore': '*.log\ndist/\n', 'logs/a.log': 'x', 'logs/a.txt': 'x', 'dist/x.js': 'x' });
    expect(await files(root, join(root, 'logs'))).toEqual(['logs/a.txt']);
    expect(await files(root, join(root, 'dist'))).toEqual(['dist/x.js']);
  });

  it('applies the .gitignore files of the enclosing git repository when the workspace is a folder of it', async () => {
    const repository = join(base, 'repository');
    await tree(repository, { '.gitignore': 'generated/\n', 'packages/app/generated/g.ts': 'x', 'packages/app/index.ts': 'x' });
    await mkdir(join(repository, '.git'));
    expect(await files(join(repository, 'packages', 'app'))).toEqual(['index.ts']);
  });

  it('skips .git and node_modules even when nothing ignores them, and does not follow symbolic links or list FIFOs', async () => {
    const root = join(base, 'skips');
    await tree(root, { '.git/HEAD': 'x', 'node_modules/dep/index.js': 'x', 'a.txt': 'x', 'outside/secret.txt': 'x' });
    await symlink(join(root, 'outside'), join(root, 'link'));
    execFileSync('mkfifo', [join(root, 'pipe')]);
    await rm(join(root, 'outside'), { recursive: true });
    await tree(root, { 'real/b.txt': 'x' });
    await symlink(join(root, 'real'), join(root, 'link-to-real'));
    expect(await files(root)).toEqual(['a.txt', 'real/b.txt']);
  });
});

describe('walkFiles above the start', () => {
  it('ignores a .gitignore or .git/info/exclude that is a FIFO instead of blocking on it', async () => {
    const root = join(base, 'fifo-rules');
    await tree(root, { 'sub/a.txt': 'x', '.git/info/README': 'x' });
    execFileSync('mkfifo', [join(root, '.gitignore'), join(root, 'sub', '.gitignore'), join(root, '.git', 'info', 'exclude')]);
    expect(await files(root)).toEqual(['sub/a.txt']);
    expect(await files(root, join(root, 'sub'))).toEqual(['sub/a.txt']);
  });

  it('reads the .gitignore of a folder whose name starts with two dots', async () => {
    const root = join(base, 'dots');
    await tree(root, { '..config/.gitignore': '*.tmp\n', '..config/inner/a.tmp': 'x', '..config/inner/b.txt': 'x' });
    expect(await files(root, join(root, '..config', 'inner'))).toEqual(['..config/inner/b.txt']);
  });
});

import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { runGit } from './git.ts';

/** The git repository a workspace belongs to. */
export interface Repository {
  /** Its top-level folder. */
  top: string;
  /** Its common git folder (`.git`), where objects, refs and `info/exclude` live. */
  commonDir: string;
  /** Where the workspace is inside it, `''` at the top or `sub/dir/`. */
  prefix: string;
}

/** The repository holding `workspace`, or null when it is in none. */
export async function readRepository(workspace: string): Promise<Repository | null> {
  const found = await runGit(workspace, ['rev-parse', '--show-toplevel', '--git-common-dir', '--show-prefix'], { allowFailure: true }).catch(() => null);
  if (!found || found.code !== 0) return null;
  const [top, commonDir, prefix = ''] = found.stdout.split('\n');
  return { top, commonDir: isAbsolute(commonDir) ? commonDir : resolve(workspace, commonDir), prefix };
}

/**
 * Adds `/<prefix>.cadre/worktrees/` to the repository's `.git/info/exclude` (once), so the
 * workspace's `git status` does not list runs' worktrees.
 */
export async function excludeWorktrees(repository: Repository): Promise<void> {
  const line = `/${repository.prefix}.cadre/worktrees/`;
  const file = join(repository.commonDir, 'info', 'exclude');
  const current = await readFile(file, 'utf8').catch(() => '');
  if (current.split('\n').some((entry) => entry.trim() === line)) return;
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${current === '' || current.endsWith('\n') ? '' : '\n'}${line}\n`);
}

/** The commit identity of the workspace when it has one, else `cadre <cadre@localhost>`, as `-c` options. */
export async function identityOptions(cwd: string): Promise<string[]> {
  const [name, email] = await Promise.all(
    ['user.name', 'user.email'].map((key) => runGit(cwd, ['config', '--get', key], { allowFailure: true }).then((result) => result.stdout.trim())),
  );
  if (name !== '' && email !== '') return [];
  return ['-c', 'user.name=cadre', '-c', 'user.email=cadre@localhost'];
}

/** Options every commit of cadre's carries: no signing (the person's key may ask for a passphrase). */
export const noSigning = ['-c', 'commit.gpgsign=false'];

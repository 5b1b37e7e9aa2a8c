import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { readRegularFile } from './read-regular-file.ts';
import type { StoreFileGuard } from './store-file-guard.ts';

const maxIgnoreFileBytes = 1024 * 1024;

/**
 * Directories never descended into, whatever `.gitignore` says: version control, and
 * dependencies (`node_modules` is huge, rarely what a task is about, and not always ignored).
 * A walk that starts inside one of them still lists it: the caller asked for it by name.
 */
export const skippedDirectories: ReadonlySet<string> = new Set(['node_modules', '.git']);

/** The rules of one `.gitignore` (or `.git/info/exclude`), relative to its directory. */
interface IgnoreLevel {
  directory: string;
  rules: Ignore;
}

/** Options of {@link walkFiles}. */
export interface WalkFilesOptions {
  /** The workspace root; `.gitignore` files between it (or its git repository's root) and the start apply. */
  root: string;
  /** Stops the walk at the next directory. */
  signal?: AbortSignal;
  /** The store's files, never yielded (nor read as a `.gitignore`): see {@link StoreFileGuard}. */
  guard?: StoreFileGuard;
}

function toPosix(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}

async function readRules(file: string, guard: StoreFileGuard | undefined): Promise<Ignore | null> {
  // Read like any file a tool reads: a FIFO named .gitignore must not block a thread for good.
  const text = await readRegularFile(file, file, maxIgnoreFileBytes, guard).then(
    (buffer) => buffer.toString('utf8'),
    () => null,
  );
  if (text === null) return null;
  try {
    return ignore({ allowRelativePaths: true }).add(text);
  } catch {
    return null;
  }
}

/** Deepest rules first: the first level with a verdict decides, as git lets a deeper `!rule` re-include. */
function isIgnored(levels: readonly IgnoreLevel[], path: string, isDirectory: boolean): boolean {
  for (let index = levels.length - 1; index >= 0; index--) {
    const level = levels[index];
    const name = toPosix(relative(level.directory, path)) + (isDirectory ? '/' : '');
    try {
      const verdict = level.rules.test(name);
      if (verdict.ignored) return true;
      if (verdict.unignored) return false;
    } catch {
      // A name `ignore` cannot judge is simply not ignored.
    }
  }
  return false;
}

function isWithin(top: string, path: string): boolean {
  const fromTop = relative(top, path);
  return fromTop === '' || (fromTop !== '..' && !fromTop.startsWith(`..${sep}`) && !isAbsolute(fromTop));
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * The ignore rules that apply above `start`: `.git/info/exclude` and the `.gitignore` of every
 * directory from the git repository's root (or the workspace root when it is not in one) down to
 * the parent of `start`.
 */
async function levelsAbove(root: string, start: string, guard: StoreFileGuard | undefined): Promise<IgnoreLevel[]> {
  let top = root;
  for (let directory = root; ; directory = dirname(directory)) {
    if (await exists(join(directory, '.git'))) {
      top = directory;
      break;
    }
    if (dirname(directory) === directory) break;
  }
  const chain: string[] = [];
  if (start !== top) {
    for (let directory = dirname(start); isWithin(top, directory); directory = dirname(directory)) {
      chain.unshift(directory);
      if (directory === top) break;
    }
  }
  const levels: IgnoreLevel[] = [];
  const exclude = await readRules(join(top, '.git', 'info', 'exclude'), guard);
  if (exclude) levels.push({ directory: top, rules: exclude });
  for (const directory of chain) {
    const rules = await readRules(join(directory, '.gitignore'), guard);
    if (rules) levels.push({ directory, rules });
  }
  return levels;
}

/**
 * Every regular file under `start`, depth first in name order. Honours `.gitignore` files the
 * way git does (nested files, `!` re-includes, rules of the directories above `start`), skips
 * {@link skippedDirectories} and the store's files (`guard`), and does not follow symbolic links
 * (so a walk cannot leave the workspace or loop). FIFOs, sockets and devices are not files here.
 * A `start` that the rules above it ignore is still walked (it was asked for by name) under its
 * own `.gitignore` files.
 */
export async function* walkFiles(start: string, { root, signal, guard }: WalkFilesOptions): AsyncGenerator<string> {
  let levels = await levelsAbove(root, start, guard);
  if (isIgnored(levels, start, true)) levels = [];
  yield* walkDirectory(start, levels, signal, guard?.active ? guard : undefined);
}

/** `.cadre/worktrees`: runs' own checkouts of the repository (docs/worktrees.md), never part of a walk of the workspace. */
function isRunWorktrees(directory: string, name: string): boolean {
  return name === 'worktrees' && basename(directory) === '.cadre';
}

async function* walkDirectory(
  directory: string,
  above: readonly IgnoreLevel[],
  signal: AbortSignal | undefined,
  guard: StoreFileGuard | undefined,
): AsyncGenerator<string> {
  if (signal?.aborted) return;
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  let levels = above;
  if (entries.some((entry) => entry.name === '.gitignore' && entry.isFile())) {
    const rules = await readRules(join(directory, '.gitignore'), guard);
    if (rules) levels = [...above, { directory, rules }];
  }
  entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (skippedDirectories.has(entry.name) || isRunWorktrees(directory, entry.name) || isIgnored(levels, path, true)) continue;
      yield* walkDirectory(path, levels, signal, guard);
    } else if (entry.isFile() && !isIgnored(levels, path, false) && !(guard && (await guard.isStoreName(path)))) {
      yield path;
    }
  }
}

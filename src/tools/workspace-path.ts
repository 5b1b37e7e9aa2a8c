import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { StoreFileGuard } from './store-file-guard.ts';
import { ToolInputError } from './tool-input-error.ts';

/** A path inside the workspace, both absolute and as the model should see it. */
export interface WorkspacePath {
  absolute: string;
  /** Relative to the root with `/` separators; `.` for the root itself. */
  relative: string;
}

/** A path a tool may write: {@link WorkspacePath} plus where the bytes really go. */
export interface WritableWorkspacePath extends WorkspacePath {
  /** The path with every existing symbolic link resolved; inside the real workspace root. */
  real: string;
}

function isInside(root: string, candidate: string): boolean {
  const path = relative(root, candidate);
  return path === '' || (!path.startsWith(`..${sep}`) && path !== '..' && !isAbsolute(path));
}

/** `src/a.ts` for `<root>/src/a.ts`, with `/` separators on every platform. */
export function workspaceRelative(root: string, absolute: string): string {
  const path = relative(root, absolute);
  return path === '' ? '.' : path.split(sep).join('/');
}

function outsideError(root: string, given: string): ToolInputError {
  return new ToolInputError(`Path '${given}' is outside the workspace (${root}); use a path relative to the workspace root.`);
}

function givenPath(path: string | undefined): string {
  const given = path === undefined || path.trim() === '' ? '.' : path.trim();
  if (given.includes('\0')) throw new ToolInputError('The path contains a NUL character; use a plain path relative to the workspace root.');
  return given;
}

/**
 * Resolves a path a model gave against the workspace root and refuses anything outside it,
 * including a symbolic link inside the root that points out of it, and any of the store's own
 * files (by `..`, a link or another spelling of the name: see {@link StoreFileGuard}).
 * @throws {ToolInputError} telling the model the path is outside the workspace, or the store's.
 */
export async function resolveWorkspacePath(root: string, path: string | undefined, guard?: StoreFileGuard): Promise<WorkspacePath> {
  const given = givenPath(path);
  const absolute = resolve(root, given);
  if (!isInside(root, absolute)) throw outsideError(root, given);
  const real = await realpath(absolute).catch(() => null);
  if (real !== null && !isInside(await realpath(root).catch(() => root), real)) throw outsideError(root, given);
  const relativePath = workspaceRelative(root, absolute);
  await guard?.check(absolute, relativePath);
  return { absolute, relative: relativePath };
}

/**
 * Resolves a path a tool will write (it may not exist yet) and proves the write lands inside the
 * workspace: the nearest existing ancestor is resolved through its symbolic links, so neither a
 * symlinked parent directory nor a link to a missing file outside can carry the write out.
 * @throws {ToolInputError} for a path outside the workspace, the root itself, or a dangling link.
 */
export async function resolveWritablePath(root: string, path: string | undefined, guard?: StoreFileGuard): Promise<WritableWorkspacePath> {
  const target = await resolveWorkspacePath(root, path, guard);
  const given = givenPath(path);
  if (target.relative === '.') throw new ToolInputError(`'${given}' is the workspace root, a directory; give a file path.`);
  const realRoot = await realpath(root).catch(() => root);
  const missing: string[] = [];
  let existing = target.absolute;
  for (;;) {
    const info = await lstat(existing).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw fileProblem(target.relative, error);
    });
    if (info !== null) break;
    missing.unshift(basename(existing));
    existing = dirname(existing);
  }
  const realExisting = await realpath(existing).catch(() => null);
  if (realExisting === null) {
    throw new ToolInputError(`'${workspaceRelative(root, existing)}' is a symbolic link to a missing file; write to a real path in the workspace.`);
  }
  const real = join(realExisting, ...missing);
  if (!isInside(realRoot, real)) throw outsideError(root, given);
  // A file not there yet is the store's by its name in its real folder (a -journal SQLite may create).
  await guard?.check(real, target.relative);
  return { ...target, real };
}

/** A tool error for a path that does not exist or cannot be read, without a stack trace. */
export function fileProblem(path: string, error: unknown): ToolInputError {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return new ToolInputError(`No such file or directory: '${path}'. Use list_files to see what exists.`);
  if (code === 'EISDIR') return new ToolInputError(`'${path}' is a directory; use list_files to see its files.`);
  if (code === 'ENOTDIR') return new ToolInputError(`'${path}' is a file, not a directory (or a part of the path is a file).`);
  if (code === 'EACCES' || code === 'EPERM') return new ToolInputError(`Permission denied: '${path}'.`);
  if (code === 'ENAMETOOLONG') return new ToolInputError(`The path '${path.slice(0, 100)}…' is too long.`);
  if (code === 'ELOOP') return new ToolInputError(`'${path}' is a loop of symbolic links.`);
  return new ToolInputError(`Cannot use '${path}': ${error instanceof Error ? error.message : String(error)}`);
}

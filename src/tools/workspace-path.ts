import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ToolInputError } from './define-tool.ts';

/** A path inside the workspace, both absolute and as the model should see it. */
export interface WorkspacePath {
  absolute: string;
  /** Relative to the root with `/` separators; `.` for the root itself. */
  relative: string;
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

/**
 * Resolves a path a model gave against the workspace root and refuses anything outside it,
 * including a symbolic link inside the root that points out of it.
 * @throws {ToolInputError} telling the model the path is outside the workspace.
 */
export async function resolveWorkspacePath(root: string, path: string | undefined): Promise<WorkspacePath> {
  const given = path === undefined || path.trim() === '' ? '.' : path.trim();
  const absolute = resolve(root, given);
  const outside = () =>
    new ToolInputError(`Path '${given}' is outside the workspace (${root}); use a path relative to the workspace root.`);
  if (!isInside(root, absolute)) throw outside();
  const real = await realpath(absolute).catch(() => null);
  if (real !== null && !isInside(await realpath(root).catch(() => root), real)) throw outside();
  return { absolute, relative: workspaceRelative(root, absolute) };
}

/** A tool error for a path that does not exist or cannot be read, without a stack trace. */
export function fileProblem(path: string, error: unknown): ToolInputError {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return new ToolInputError(`No such file or directory: '${path}'. Use list_files to see what exists.`);
  if (code === 'EISDIR') return new ToolInputError(`'${path}' is a directory; use list_files to see its files.`);
  if (code === 'ENOTDIR') return new ToolInputError(`'${path}' is a file, not a directory.`);
  if (code === 'EACCES' || code === 'EPERM') return new ToolInputError(`Permission denied: '${path}'.`);
  return new ToolInputError(`Cannot read '${path}': ${error instanceof Error ? error.message : String(error)}`);
}

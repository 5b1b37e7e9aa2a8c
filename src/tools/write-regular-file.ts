import { constants } from 'node:fs';
import { lstat, mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { StoreFileGuard } from './store-file-guard.ts';
import { ToolInputError } from './tool-input-error.ts';
import { fileProblem, type WritableWorkspacePath } from './workspace-path.ts';

/**
 * Replaces the whole content of a file the workspace check resolved ({@link WritableWorkspacePath}),
 * creating missing parent folders. Opened at its real path with `O_NOFOLLOW` (a link swapped in
 * after the check fails instead of being followed) and without blocking, then checked with
 * `fstat`, so only a regular file is ever written: never a FIFO, device or directory.
 * A `guard` keeps it off the store's files: they are never opened (see {@link StoreFileGuard}).
 * @returns whether the file was created.
 * @throws {ToolInputError} for a path that is not a regular file, cannot be written, or is the store's.
 */
export async function writeRegularFile(target: WritableWorkspacePath, content: string, guard?: StoreFileGuard): Promise<{ created: boolean }> {
  await guard?.check(target.real, target.relative);
  await mkdir(dirname(target.real), { recursive: true }).catch((error: unknown) => {
    throw fileProblem(target.relative, error);
  });
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  const existed = await lstat(target.real).then(
    () => true,
    () => false,
  );
  const handle = await open(target.real, flags, 0o666).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENXIO')
      throw new ToolInputError(`'${target.relative}' is not a regular file (a FIFO, socket or device); only regular files are written.`);
    throw fileProblem(target.relative, error);
  });
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new ToolInputError(`'${target.relative}' is not a regular file (a FIFO, socket or device); only regular files are written.`);
    await handle.truncate(0);
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
  return { created: !existed };
}

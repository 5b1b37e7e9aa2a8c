import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { StoreFileGuard } from './store-file-guard.ts';
import { ToolInputError } from './tool-input-error.ts';
import { fileProblem } from './workspace-path.ts';

/** A file refused because it is larger than the caller reads. */
export class FileTooLargeError extends ToolInputError {
  readonly size: number;
  constructor(path: string, size: number, maxBytes: number) {
    super(`'${path}' is ${size} bytes, more than this tool reads (${maxBytes}); use grep to find the part you need.`);
    this.size = size;
  }
}

/**
 * Reads a regular file, at most `maxBytes`. The file is opened without blocking and checked
 * with `fstat` on the open handle, so a FIFO, socket or device is refused instead of hanging
 * the process (and there is no gap between the check and the read).
 * A `guard` keeps it off the store's files: they are never opened (see {@link StoreFileGuard}).
 * @throws {ToolInputError} for a missing file, a directory, a special file, one too large, or the store's.
 */
export async function readRegularFile(absolute: string, relative: string, maxBytes: number, guard?: StoreFileGuard): Promise<Buffer> {
  await guard?.check(absolute, relative);
  const handle = await open(absolute, constants.O_RDONLY | constants.O_NONBLOCK).catch((error: unknown) => {
    throw fileProblem(relative, error);
  });
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw fileProblem(relative, { code: 'EISDIR' });
    if (!info.isFile()) throw new ToolInputError(`'${relative}' is not a regular file (a FIFO, socket or device); only regular files are read.`);
    if (info.size > maxBytes) throw new FileTooLargeError(relative, info.size, maxBytes);
    const buffer = Buffer.alloc(info.size);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/** Whether the first bytes hold a NUL, the mark of a binary file (as git and grep judge it). */
export function looksBinary(buffer: Buffer): boolean {
  return buffer.subarray(0, 8000).includes(0);
}

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Directories never descended into: dependencies and version control. */
export const skippedDirectories: ReadonlySet<string> = new Set(['node_modules', '.git']);

/**
 * Every file under `directory`, depth first in name order, skipping {@link skippedDirectories}
 * and not following symbolic links (so a walk cannot leave the workspace or loop).
 * Directories that cannot be read are skipped.
 */
export async function* walkFiles(directory: string, signal?: AbortSignal): AsyncGenerator<string> {
  if (signal?.aborted) return;
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (!skippedDirectories.has(entry.name)) yield* walkFiles(path, signal);
    } else if (entry.isFile()) {
      yield path;
    }
  }
}

import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from './define-tool.ts';
import { runSearch } from './run-search.ts';
import { toolDescription } from './tool-description.ts';
import { createStoreFileGuard } from './store-file-guard.ts';
import { fileProblem, resolveWorkspacePath } from './workspace-path.ts';

const inputSchema = z.object({
  path: z.string('must be a directory path relative to the workspace root').optional(),
  pattern: z.string('must be a glob such as *.ts').optional(),
});

/**
 * `list_files {path?, pattern?}`: the files under a directory of the workspace, recursively,
 * relative to the root, honouring `.gitignore` and skipping `node_modules` and `.git`, at most
 * `maxEntries` of them, never the store's files (`storeFiles`). Walks and matches in the search
 * worker, with a deadline.
 */
export function createListFilesTool({
  root,
  maxEntries = 500,
  timeoutMs = 30_000,
  storeFiles = [],
}: {
  root: string;
  maxEntries?: number;
  timeoutMs?: number;
  storeFiles?: readonly string[] | undefined;
}) {
  return defineTool({
    name: 'list_files',
    description: toolDescription('list-files.txt', { maxEntries }),
    inputSchema,
    risk: 'read',
    argument: (input) => input.path ?? '.',
    execute: async ({ path, pattern }, { abortSignal }) => {
      const directory = await resolveWorkspacePath(root, path, createStoreFileGuard(storeFiles));
      const info = await stat(directory.absolute).catch((error: unknown) => {
        throw fileProblem(directory.relative, error);
      });
      if (!info.isDirectory()) throw fileProblem(directory.relative, { code: 'ENOTDIR' });
      const glob = pattern?.trim() ? pattern.trim() : undefined;
      const { lines, note } = await runSearch(
        { kind: 'list', root, storeFiles, start: directory.absolute, glob, maxEntries },
        { signal: abortSignal, timeoutMs, toolName: 'list_files' },
      );
      if (lines.length === 0) return note ?? `(no files${glob ? ` match '${glob}'` : ''} under ${directory.relative})`;
      return [...lines, ...(note ? [note] : [])].join('\n');
    },
  });
}

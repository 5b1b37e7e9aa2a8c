import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, ToolInputError } from './define-tool.ts';
import { matchGlob } from './match-glob.ts';
import { walkFiles } from './walk-files.ts';
import { fileProblem, resolveWorkspacePath, workspaceRelative } from './workspace-path.ts';

/**
 * `list_files {path?, pattern?}`: the files under a directory of the workspace, recursively,
 * relative to the root, skipping `node_modules` and `.git`, at most `maxEntries` of them.
 */
export function createListFilesTool({ root, maxEntries = 500 }: { root: string; maxEntries?: number }) {
  return defineTool({
    name: 'list_files',
    description:
      'List the files under a directory of the workspace, recursively (node_modules and .git are skipped). ' +
      '`path` is the directory (default: the workspace root); `pattern` is a glob such as `*.ts` (matched against ' +
      `file names) or \`src/**/*.md\` (matched against paths from the root). At most ${maxEntries} paths.`,
    inputSchema: z.object({
      path: z.string('must be a directory path relative to the workspace root').optional(),
      pattern: z.string('must be a glob such as *.ts').optional(),
    }),
    execute: async ({ path, pattern }, { abortSignal }) => {
      const directory = await resolveWorkspacePath(root, path);
      const info = await stat(directory.absolute).catch((error: unknown) => {
        throw fileProblem(directory.relative, error);
      });
      if (!info.isDirectory()) throw fileProblem(directory.relative, { code: 'ENOTDIR' });
      let matches: (path: string) => boolean = () => true;
      if (pattern !== undefined && pattern.trim() !== '') {
        try {
          matches = matchGlob(pattern.trim());
        } catch (error) {
          throw new ToolInputError((error as Error).message);
        }
      }
      const found: string[] = [];
      let more = false;
      for await (const file of walkFiles(directory.absolute, abortSignal)) {
        const relative = workspaceRelative(root, file);
        if (!matches(relative)) continue;
        if (found.length === maxEntries) {
          more = true;
          break;
        }
        found.push(relative);
      }
      if (found.length === 0) return `(no files${pattern ? ` match '${pattern}'` : ''} under ${directory.relative})`;
      if (more) found.push(`(stopped at ${maxEntries} files; narrow it with path or pattern)`);
      return found.join('\n');
    },
  });
}

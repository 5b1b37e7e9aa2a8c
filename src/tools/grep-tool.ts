import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, ToolInputError } from './define-tool.ts';
import { walkFiles } from './walk-files.ts';
import { fileProblem, resolveWorkspacePath, workspaceRelative } from './workspace-path.ts';

/** Caps of `grep`. */
export interface GrepLimits {
  /** Matching lines returned. @default 200 */
  maxMatches: number;
  /** Characters shown of a matching line. @default 200 */
  maxLineLength: number;
  /** Files larger than this are skipped. @default 1 MB */
  maxFileBytes: number;
}

const defaults: GrepLimits = { maxMatches: 200, maxLineLength: 200, maxFileBytes: 1024 * 1024 };

function compile(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (error) {
    throw new ToolInputError(`pattern is not a valid regular expression: ${(error as Error).message}`);
  }
}

/**
 * `grep {pattern, path?}`: lines of text files under a file or directory of the workspace that
 * match a regular expression, as `file:line: text`, skipping binary and very large files.
 */
export function createGrepTool({ root, limits = {} }: { root: string; limits?: Partial<GrepLimits> }) {
  const caps = { ...defaults, ...limits };
  return defineTool({
    name: 'grep',
    description:
      'Search the text files of the workspace for a JavaScript regular expression. Returns `file:line: text` per ' +
      `matching line, at most ${caps.maxMatches}. \`path\` is a file or directory to search (default: the workspace root).`,
    inputSchema: z.object({
      pattern: z.string({ error: 'required: a regular expression' }).min(1, 'must not be empty'),
      path: z.string('must be a path relative to the workspace root').optional(),
    }),
    execute: async ({ pattern, path }, { abortSignal }) => {
      const expression = compile(pattern);
      const target = await resolveWorkspacePath(root, path);
      const info = await stat(target.absolute).catch((error: unknown) => {
        throw fileProblem(target.relative, error);
      });
      const files = info.isDirectory() ? walkFiles(target.absolute, abortSignal) : single(target.absolute);
      const matches: string[] = [];
      for await (const file of files) {
        const buffer = await readFile(file).catch(() => null);
        if (buffer === null || buffer.length > caps.maxFileBytes || buffer.subarray(0, 8000).includes(0)) continue;
        const lines = buffer.toString('utf8').split(/\r?\n/);
        for (let index = 0; index < lines.length; index++) {
          if (!expression.test(lines[index])) continue;
          if (matches.length === caps.maxMatches) {
            matches.push(`(stopped at ${caps.maxMatches} matches; narrow it with path or a more specific pattern)`);
            return matches.join('\n');
          }
          const line = lines[index].trim();
          const text = line.length > caps.maxLineLength ? `${line.slice(0, caps.maxLineLength)}…` : line;
          matches.push(`${workspaceRelative(root, file)}:${index + 1}: ${text}`);
        }
      }
      return matches.length > 0 ? matches.join('\n') : `(no matches for /${pattern}/ under ${target.relative})`;
    },
  });
}

async function* single(file: string): AsyncGenerator<string> {
  yield file;
}

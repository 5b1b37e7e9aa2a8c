import { z } from 'zod';
import { defineTool, ToolInputError } from './define-tool.ts';
import { looksBinary, readRegularFile } from './read-regular-file.ts';
import { toolDescription } from './tool-description.ts';
import { createStoreFileGuard } from './store-file-guard.ts';
import { resolveWorkspacePath } from './workspace-path.ts';

/** Caps of `read_file`. */
export interface ReadFileLimits {
  /** Lines returned when `limit` is not given. @default 400 */
  defaultLines: number;
  /** Characters of one line before it is cut. @default 2000 */
  maxLineLength: number;
  /** Characters of the whole output. @default 60000 */
  maxOutputChars: number;
  /** Files larger than this are refused. @default 10 MB */
  maxFileBytes: number;
}

const defaults: ReadFileLimits = { defaultLines: 400, maxLineLength: 2000, maxOutputChars: 60_000, maxFileBytes: 10 * 1024 * 1024 };

/**
 * `read_file {path, offset?, limit?}`: a text file of the workspace with line numbers, from line
 * `offset` (1-based), at most `limit` lines, with a note saying how to read on when it stops early.
 * The store's files (`storeFiles`) are refused, never opened.
 */
export function createReadFileTool({
  root,
  limits = {},
  storeFiles = [],
}: {
  root: string;
  limits?: Partial<ReadFileLimits>;
  storeFiles?: readonly string[] | undefined;
}) {
  const caps = { ...defaults, ...limits };
  return defineTool({
    name: 'read_file',
    description: toolDescription('read-file.txt', caps),
    risk: 'read',
    argument: (input) => input.path,
    inputSchema: z.object({
      path: z.string({ error: 'required: a file path relative to the workspace root' }).min(1, 'must not be empty'),
      offset: z
        .number('must be a line number')
        .int('must be a whole number')
        .min(1, 'must be at least 1 (lines start at 1)')
        .max(Number.MAX_SAFE_INTEGER, 'is too large')
        .optional(),
      limit: z
        .number('must be a number of lines')
        .int('must be a whole number')
        .min(1, 'must be at least 1')
        .max(Number.MAX_SAFE_INTEGER, 'is too large')
        .optional(),
    }),
    execute: async ({ path, offset = 1, limit = caps.defaultLines }) => {
      const guard = createStoreFileGuard(storeFiles);
      const target = await resolveWorkspacePath(root, path, guard);
      const buffer = await readRegularFile(target.absolute, target.relative, caps.maxFileBytes, guard);
      if (looksBinary(buffer)) throw new ToolInputError(`'${target.relative}' is a binary file; read_file reads text only.`);
      const lines = buffer.toString('utf8').split(/\r?\n/);
      if (lines.length > 1 && lines.at(-1) === '') lines.pop();
      if (buffer.length === 0) return `(${target.relative} is empty)`;
      if (offset > lines.length) {
        throw new ToolInputError(`offset ${offset} is past the end of '${target.relative}', which has ${lines.length} lines.`);
      }
      const width = String(Math.min(lines.length, offset + limit - 1)).length;
      const output: string[] = [];
      let size = 0;
      let last = offset - 1;
      for (let index = offset - 1; index < lines.length && index < offset - 1 + limit; index++) {
        const text = lines[index].length > caps.maxLineLength ? `${lines[index].slice(0, caps.maxLineLength)}… [line cut]` : lines[index];
        const line = `${String(index + 1).padStart(width)}\t${text}`;
        if (size + line.length + 1 > caps.maxOutputChars && output.length > 0) break;
        output.push(line);
        size += line.length + 1;
        last = index + 1;
      }
      if (last < lines.length) {
        output.push(`(lines ${offset}-${last} of ${lines.length}; call read_file with offset ${last + 1} to read on)`);
      }
      return output.join('\n');
    },
  });
}

import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, ToolInputError } from './define-tool.ts';
import { runSearch } from './run-search.ts';
import { toolDescription } from './tool-description.ts';
import { createStoreFileGuard } from './store-file-guard.ts';
import { fileProblem, resolveWorkspacePath } from './workspace-path.ts';

/** Caps of `grep`. */
export interface GrepLimits {
  /** Matching lines returned. @default 200 */
  maxMatches: number;
  /** Characters shown of a matching line. @default 200 */
  maxLineLength: number;
  /** Files larger than this are skipped. @default 1 MB */
  maxFileBytes: number;
  /** A search still going after this long ends with what it found so far. @default 30000 */
  timeoutMs: number;
}

const defaults: GrepLimits = { maxMatches: 200, maxLineLength: 200, maxFileBytes: 1024 * 1024, timeoutMs: 30_000 };

const inputSchema = z.object({
  pattern: z.string({ error: 'required: a regular expression' }).min(1, 'must not be empty').max(2000, 'must be at most 2000 characters'),
  path: z.string('must be a path relative to the workspace root').optional(),
  glob: z.string('must be a glob such as *.ts').optional(),
  ignore_case: z.boolean('must be true or false').optional(),
});

/**
 * `grep {pattern, path?, glob?, ignore_case?}`: lines of text files under a file or directory of
 * the workspace that match a regular expression, as `file:line: text`. The pattern is RE2 syntax,
 * matched in linear time by re2js, and the whole search runs in a worker thread with a deadline,
 * so no pattern can block the process and a stop ends it at once. The store's files (`storeFiles`)
 * are never opened: a walk skips them, and naming one is a tool error.
 */
export function createGrepTool({
  root,
  limits = {},
  storeFiles = [],
}: {
  root: string;
  limits?: Partial<GrepLimits>;
  storeFiles?: readonly string[] | undefined;
}) {
  const caps = { ...defaults, ...limits };
  return defineTool({
    name: 'grep',
    description: toolDescription('grep.txt', { ...caps, timeoutSeconds: caps.timeoutMs / 1000 }),
    inputSchema,
    risk: 'read',
    argument: (input) => input.pattern,
    execute: async ({ pattern, path, glob, ignore_case: ignoreCase = false }, { abortSignal }) => {
      const target = await resolveWorkspacePath(root, path, createStoreFileGuard(storeFiles));
      const info = await stat(target.absolute).catch((error: unknown) => {
        throw fileProblem(target.relative, error);
      });
      if (!info.isDirectory() && !info.isFile()) {
        throw new ToolInputError(`'${target.relative}' is not a regular file (a FIFO, socket or device); grep reads regular files only.`);
      }
      const trimmedGlob = glob?.trim() ? glob.trim() : undefined;
      const { lines, note } = await runSearch(
        {
          kind: 'grep',
          root,
          storeFiles,
          start: target.absolute,
          startIsFile: info.isFile(),
          pattern,
          ignoreCase,
          glob: trimmedGlob,
          maxMatches: caps.maxMatches,
          maxLineLength: caps.maxLineLength,
          maxFileBytes: caps.maxFileBytes,
        },
        { signal: abortSignal, timeoutMs: caps.timeoutMs, toolName: 'grep' },
      );
      if (lines.length === 0) {
        const where = trimmedGlob ? `${target.relative} (files matching '${trimmedGlob}')` : target.relative;
        return note ?? `(no matches for /${pattern}/${ignoreCase ? 'i' : ''} under ${where})`;
      }
      return [...lines, ...(note ? [note] : [])].join('\n');
    },
  });
}

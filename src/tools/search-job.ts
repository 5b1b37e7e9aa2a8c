import { RE2JS } from 're2js';
import { ToolInputError } from './tool-input-error.ts';
import { matchGlob } from './match-glob.ts';
import { looksBinary, readRegularFile } from './read-regular-file.ts';
import { createStoreFileGuard } from './store-file-guard.ts';
import { walkFiles } from './walk-files.ts';
import { workspaceRelative } from './workspace-path.ts';

/** `list_files` work: the files under `start`, filtered by a glob. */
export interface ListJob {
  kind: 'list';
  root: string;
  /** The store's files (`Store.files`): never listed. */
  storeFiles: readonly string[];
  start: string;
  glob?: string;
  maxEntries: number;
}

/** `grep` work: lines of the files under `start` (or of the file `start`) matching `pattern`. */
export interface GrepJob {
  kind: 'grep';
  root: string;
  /** The store's files (`Store.files`): never opened, so never searched. */
  storeFiles: readonly string[];
  start: string;
  startIsFile: boolean;
  pattern: string;
  ignoreCase: boolean;
  glob?: string;
  maxMatches: number;
  maxLineLength: number;
  maxFileBytes: number;
}

/** Work for the search worker: walking, glob and pattern matching that must not block the process. */
export type SearchJob = ListJob | GrepJob;

/** What the search worker posts to the main thread. */
export type SearchMessage =
  | { type: 'lines'; lines: string[] }
  | { type: 'done'; note?: string }
  | { type: 'input-error'; message: string }
  | { type: 'error'; message: string };

/** How a job ended: the note says why it stopped early, if it did. */
export interface SearchJobEnd {
  note?: string;
}

/**
 * Runs a {@link SearchJob}, handing result lines to `emit` as they are found. Patterns are RE2
 * syntax, matched in time linear in the text by re2js; globs by picomatch. Runs in the search
 * worker (run-search.ts), where a deadline or a stop can end it at any moment.
 * @throws {ToolInputError} for a pattern or glob that does not parse.
 */
export async function runSearchJob(job: SearchJob, emit: (line: string) => void): Promise<SearchJobEnd> {
  const keep = job.glob === undefined ? () => true : compileGlob(job.glob);
  const guard = createStoreFileGuard(job.storeFiles);
  if (job.kind === 'list') {
    let count = 0;
    for await (const file of walkFiles(job.start, { root: job.root, guard })) {
      const relative = workspaceRelative(job.root, file);
      if (!keep(relative)) continue;
      if (count === job.maxEntries) return { note: `(stopped at ${job.maxEntries} files; narrow it with path or pattern)` };
      emit(relative);
      count++;
    }
    return {};
  }
  const expression = compilePattern(job.pattern, job.ignoreCase);
  const files = job.startIsFile ? [job.start] : walkFiles(job.start, { root: job.root, guard });
  const fileGuard = job.startIsFile ? guard : await guard.forWalkedFiles();
  let count = 0;
  for await (const file of files) {
    const relative = workspaceRelative(job.root, file);
    if (!job.startIsFile && !keep(relative)) continue;
    // A hard link to a store file is one the walk cannot tell by its name: the guard then checks each file.
    const buffer = await readRegularFile(file, relative, job.maxFileBytes, fileGuard).catch(() => null);
    if (buffer === null || looksBinary(buffer)) continue;
    const lines = buffer.toString('utf8').split(/\r?\n/);
    for (let index = 0; index < lines.length; index++) {
      if (!expression.test(lines[index])) continue;
      if (count === job.maxMatches) return { note: `(stopped at ${job.maxMatches} matches; narrow it with path, glob or a more specific pattern)` };
      const line = lines[index].trim();
      const text = line.length > job.maxLineLength ? `${line.slice(0, job.maxLineLength)}…` : line;
      emit(`${relative}:${index + 1}: ${text}`);
      count++;
    }
  }
  return {};
}

function compilePattern(pattern: string, ignoreCase: boolean): RE2JS {
  try {
    return RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    throw new ToolInputError(`pattern is not a valid regular expression (RE2 syntax: no lookaround or backreferences): ${(error as Error).message}`);
  }
}

function compileGlob(glob: string): (path: string) => boolean {
  try {
    return matchGlob(glob);
  } catch (error) {
    throw new ToolInputError(`'${glob}' is not a valid glob: ${(error as Error).message}`);
  }
}

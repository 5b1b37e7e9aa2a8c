import { execFile } from 'node:child_process';
import { WorktreeError } from './worktree-error.ts';

/** What a git command printed and how it exited. */
export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link runGit}. */
export interface RunGitOptions {
  /** Variables set for this command only (a commit's identity). @default none */
  env?: Record<string, string>;
  /** Whether a non-zero exit resolves instead of throwing. @default false */
  allowFailure?: boolean;
}

/** How long a command waits at most for another process's git lock (`index.lock`, a ref's `.lock`). */
const lockWaitMs = 10_000;

/** git's words for a lock file another process holds. */
const heldLock = /\.lock'?: File exists|Unable to create '[^']*\.lock'|cannot lock ref|could not lock config file/i;

/**
 * The environment of cadre's git commands: the person's, minus what would point git elsewhere (a
 * hook's `GIT_DIR`), in the C locale so messages parse, and never prompting.
 */
function gitEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_COMMON_DIR', 'GIT_PREFIX']) delete env[name];
  return { ...env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', ...extra };
}

function execGit(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') {
        reject(
          new WorktreeError('git', (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'git is not installed (no git on the PATH).' : error.message, {
            cause: error,
          }),
        );
        return;
      }
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

/**
 * Runs one git command in `cwd` (no shell: `execFile`). A lock file another process holds
 * (`index.lock`, a ref's lock) is waited out, retrying for up to 10 s, so cadre's commands and a
 * person's git take turns.
 * @throws {WorktreeError} kind `git` when it exits non-zero (unless `allowFailure`), with git's message.
 */
export async function runGit(cwd: string, args: readonly string[], { env, allowFailure = false }: RunGitOptions = {}): Promise<GitResult> {
  const started = performance.now();
  for (let attempt = 1; ; attempt++) {
    const result = await execGit(cwd, args, gitEnvironment(env));
    if (result.code !== 0 && heldLock.test(result.stderr) && performance.now() - started < lockWaitMs) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(500, 25 * 2 ** attempt)));
      continue;
    }
    if (result.code !== 0 && !allowFailure) {
      const message = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-3).join(' ');
      throw new WorktreeError('git', `git ${args[0]} failed: ${message}`);
    }
    return result;
  }
}

/** The operation under way on each repository of this process: the next one waits for it. */
const operations = new Map<string, Promise<unknown>>();

/**
 * Runs `operation` once no other operation of this process is under way on the repository `key`
 * (its common git folder): cadre's own git commands on one repository run one at a time.
 */
export function oneAtATime<T>(key: string, operation: () => Promise<T>): Promise<T> {
  const before = operations.get(key) ?? Promise.resolve();
  const result = before.then(operation, operation);
  const settled = result.catch(() => {});
  operations.set(key, settled);
  void settled.then(() => {
    if (operations.get(key) === settled) operations.delete(key);
  });
  return result;
}

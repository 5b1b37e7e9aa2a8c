import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrepTool } from './grep-tool.ts';
import { createListFilesTool } from './list-files-tool.ts';
import { createReadFileTool } from './read-file-tool.ts';

let root: string;

function call(tool: Tool, input: unknown, abortSignal?: AbortSignal): Promise<string> {
  return tool.execute!(input, { toolCallId: 'call_1', messages: [], context: undefined, abortSignal }) as Promise<string>;
}

async function failure(tool: Tool, input: unknown): Promise<string> {
  return call(tool, input).then(
    () => 'expected a tool error',
    (error: Error) => error.message,
  );
}

/** The largest delay of a 20 ms interval timer while `work` runs: how long the event loop was blocked. */
async function worstTimerDelay<T>(work: Promise<T>): Promise<{ result: T; worstMs: number }> {
  let worstMs = 0;
  let last = performance.now();
  const interval = setInterval(() => {
    const now = performance.now();
    worstMs = Math.max(worstMs, now - last - 20);
    last = now;
  }, 20);
  try {
    return { result: await work, worstMs };
  } finally {
    clearInterval(interval);
  }
}

// re2js matches any pattern in linear time, but globs are picomatch's backtracking regular
// expressions: this one takes about 30 s on the 40-character name in `slow/`, so a search with it
// stands for any long search.
const slowGlob = '*a*a*a*a*a*a*a*a*a*a*b';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'cadre-grep-'));
  await mkdir(join(root, 'src'), { recursive: true });
  await mkdir(join(root, 'slow'), { recursive: true });
  await mkdir(join(root, 'dist'), { recursive: true });
  await writeFile(join(root, '.gitignore'), 'dist/\n');
  await writeFile(join(root, 'dist', 'bundle.js'), 'const Needle = 1;\n');
  await writeFile(join(root, 'src', 'a.ts'), 'const Needle = 1;\nconst needle = 2;\n');
  await writeFile(join(root, 'src', 'b.ts'), 'needle b\n');
  await writeFile(join(root, 'src', 'c.md'), 'needle c\n');
  await writeFile(join(root, 'src', 'd.js'), 'needle d\n');
  await writeFile(join(root, 'evil.txt'), `${'a'.repeat(100_000)}b\n`);
  await writeFile(join(root, 'slow', 'a'.repeat(40)), 'x\n');
  execFileSync('mkfifo', [join(root, 'pipe')]);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('grep never blocks the process', () => {
  it('matches a catastrophic pattern over a long line promptly, in linear time', async () => {
    const grep = createGrepTool({ root });
    const started = performance.now();
    const { result, worstMs } = await worstTimerDelay(call(grep, { pattern: '(a+)+$', path: 'evil.txt' }));
    expect(result).toBe('(no matches for /(a+)+$/ under evil.txt)');
    expect(performance.now() - started).toBeLessThan(2000);
    expect(worstMs).toBeLessThan(300);
  });

  it('keeps timers firing on time during a long search (a backtracking glob) and ends it at the deadline with a note', async () => {
    const grep = createGrepTool({ root, limits: { timeoutMs: 1500 } });
    const started = performance.now();
    const { result, worstMs } = await worstTimerDelay(call(grep, { pattern: 'x', path: 'slow', glob: slowGlob }));
    const elapsed = performance.now() - started;
    expect(result).toBe('(grep stopped after 1.5 s; narrow it with path, glob or a simpler pattern)');
    expect(elapsed).toBeGreaterThanOrEqual(1500);
    expect(elapsed).toBeLessThan(3000);
    expect(worstMs).toBeLessThan(300);
  });

  it('ends a long search within 2 s of a stop (the abort signal)', async () => {
    const grep = createGrepTool({ root });
    const controller = new AbortController();
    let stoppedAt = 0;
    setTimeout(() => {
      stoppedAt = performance.now();
      controller.abort(new Error('stopped by a person'));
    }, 500);
    const outcome = await call(grep, { pattern: 'x', path: 'slow', glob: slowGlob }, controller.signal).then(
      () => 'finished',
      (error: Error) => error.message,
    );
    expect(outcome).toBe('stopped by a person');
    expect(performance.now() - stoppedAt).toBeLessThan(2000);
  });

  it('refuses a FIFO given as path instead of hanging, and skips FIFOs in a walk', async () => {
    const grep = createGrepTool({ root });
    expect(await failure(grep, { pattern: 'x', path: 'pipe' })).toBe("'pipe' is not a regular file (a FIFO, socket or device); grep reads regular files only.");
    expect(await call(grep, { pattern: 'needle b' })).toBe('src/b.ts:1: needle b');
  });
});

describe('grep input', () => {
  it('filters files with glob (classes and extglobs too) and matches case-insensitively with ignore_case', async () => {
    const grep = createGrepTool({ root });
    expect(await call(grep, { pattern: 'needle', glob: '*.@(ts|md)' })).toBe('src/a.ts:2: const needle = 2;\nsrc/b.ts:1: needle b\nsrc/c.md:1: needle c');
    expect(await call(grep, { pattern: 'needle', glob: 'src/[bd].*' })).toBe('src/b.ts:1: needle b\nsrc/d.js:1: needle d');
    expect(await call(grep, { pattern: 'NEEDLE =', ignore_case: true })).toBe('src/a.ts:1: const Needle = 1;\nsrc/a.ts:2: const needle = 2;');
    expect(await call(grep, { pattern: 'nothing', glob: '*.ts' })).toBe("(no matches for /nothing/ under . (files matching '*.ts'))");
  });

  it('skips what .gitignore ignores unless the path names it', async () => {
    const grep = createGrepTool({ root });
    expect(await call(grep, { pattern: 'Needle' })).toBe('src/a.ts:1: const Needle = 1;');
    expect(await call(grep, { pattern: 'Needle', path: 'dist' })).toBe('dist/bundle.js:1: const Needle = 1;');
  });

  it('explains patterns RE2 does not accept, bad globs and bad types', async () => {
    const grep = createGrepTool({ root });
    expect(await failure(grep, { pattern: '(?<=a)b' })).toMatch(/^pattern is not a valid regular expression \(RE2 syntax: no lookaround or backreferences\)/);
    expect(await failure(grep, { pattern: '(a)\\1' })).toContain('invalid escape sequence');
    expect(await failure(grep, { pattern: 'x', glob: '[' })).toMatch(/^'\[' is not a valid glob/);
    expect(await failure(grep, { pattern: 'x', ignore_case: 'yes' })).toBe(
      "Invalid input for tool 'grep': ignore_case: must be true or false. Fix these and call it again.",
    );
  });
});

describe('read_file and list_files', () => {
  it('read_file refuses a FIFO at once instead of hanging the process', async () => {
    const readFile = createReadFileTool({ root });
    expect(await failure(readFile, { path: 'pipe' })).toBe("'pipe' is not a regular file (a FIFO, socket or device); only regular files are read.");
  });

  it('list_files matches [ab] classes and extglobs, and skips ignored directories', async () => {
    const listFiles = createListFilesTool({ root });
    expect(await call(listFiles, { pattern: '[ab].ts' })).toBe('src/a.ts\nsrc/b.ts');
    expect(await call(listFiles, { pattern: '*.@(md|js)' })).toBe('src/c.md\nsrc/d.js');
  });

  it('list_files ends a walk whose glob backtracks exponentially at its deadline, without blocking', async () => {
    const listFiles = createListFilesTool({ root, timeoutMs: 1000 });
    const { result, worstMs } = await worstTimerDelay(call(listFiles, { path: 'slow', pattern: slowGlob }));
    expect(result).toBe('(list_files stopped after 1 s; narrow it with path, glob or a simpler pattern)');
    expect(worstMs).toBeLessThan(300);
  });
});

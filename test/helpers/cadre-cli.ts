import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { loadScript, type Script, startScriptedServer, type ScriptedRequest, type ScriptedServer, type ScriptedTurn } from '../../src/testing/index.ts';

/** The `cadre` executable under test. */
export const cadreBin = resolve(import.meta.dirname, '..', '..', 'bin', 'cadre.js');

const scoutAgent = `---
description: Looks around the workspace and reports what is there.
tools: [list_files, read_file]
mode: subagent
---
You are the scout. List and read files, then report.
`;

/** What a finished `cadre` process left behind. */
export interface CadreResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A `cadre` process still running, with its output so far. */
export interface CadreProcess {
  child: ChildProcess;
  output: { stdout: string; stderr: string };
  exited: Promise<CadreResult>;
  /** Resolves once stderr matches the pattern; returns the match. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

/** A temporary working directory with a few files, its own HOME, and a scripted model server. */
export interface Workspace {
  cwd: string;
  database: string;
  env: Record<string, string>;
  server: ScriptedServer;
  /** With `CADRE_E2E_QUEUE_URL`: the two `cadre worker` processes carrying out the workspace's runs. */
  workers: CadreProcess[];
  /** `--model openai-compatible:scripted --base-url <server> --db <database>` */
  modelFlags: string[];
  start(args: readonly string[], options?: { input?: string; env?: Record<string, string> }): CadreProcess;
  run(args: readonly string[], options?: { input?: string; env?: Record<string, string> }): Promise<CadreResult>;
  /** `cadre <command> --json --db <database>`, parsed. */
  json<T>(args: readonly string[]): Promise<T>;
  close(): Promise<void>;
}

/**
 * The workspace's database: a SQLite file, or, with `CADRE_E2E_POSTGRES_URL` set (.ci/run runs the
 * suite a second time so), a schema of its own on that Postgres server.
 */
function e2eDatabase(cwd: string): string {
  const postgres = process.env.CADRE_E2E_POSTGRES_URL;
  if (!postgres) return join(cwd, '.cadre', 'test.db');
  const url = new URL(postgres);
  url.searchParams.set('schema', `e2e_${basename(cwd).replace(/\W/g, '_')}`.toLowerCase());
  return url.toString();
}

/**
 * The workspace's queue, with `CADRE_E2E_QUEUE_URL` set (scripts/test-e2e-workers.ts runs the suite
 * once more so): a prefix of its own on that Redis server, so that each workspace's runs go to its
 * own two `cadre worker` processes.
 */
function e2eQueue(cwd: string): string | undefined {
  const redis = process.env.CADRE_E2E_QUEUE_URL;
  if (!redis) return undefined;
  const url = new URL(redis);
  url.searchParams.set('prefix', `e2e-${basename(cwd)}`);
  return url.toString();
}

/**
 * Creates a {@link Workspace}; call `close()` when done.
 * @param options.script the scripted model's script: a file, or a function answering each request. @default test/fixtures/script.yaml
 */
export async function createWorkspace(
  options: {
    /** The model's script: a file, a function, or the rules themselves (default: test/fixtures/script.yaml). */
    script?: string | Script | ((request: ScriptedRequest) => ScriptedTurn);
    /** The workspace's cadre.config.json, written before its workers (with a queue) start, so they read it too. */
    config?: Record<string, unknown>;
    /** More environment for the workers (with a queue), as the person who starts them would give them. */
    workerEnv?: Record<string, string>;
  } = {},
): Promise<Workspace> {
  const cwd = await mkdtemp(join(tmpdir(), 'cadre-e2e-'));
  await mkdir(join(cwd, 'src'));
  await writeFile(join(cwd, 'notes.txt'), 'Remember the milk.\n');
  await writeFile(join(cwd, 'src', 'app.ts'), 'export const app = 1;\n');
  const queue = e2eQueue(cwd);
  // The queue goes in the environment: a workspace's own file names one only once a person trusted it.
  await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify(options.config ?? { limits: { maxActivePerParent: 4 } }));
  await mkdir(join(cwd, '.cadre', 'agents'), { recursive: true });
  await writeFile(join(cwd, '.cadre', 'agents', 'scout.md'), scoutAgent);
  const script =
    typeof options.script === 'function' || Array.isArray(options.script)
      ? options.script
      : await loadScript(options.script ?? resolve(import.meta.dirname, '..', 'fixtures', 'script.yaml'));
  const server = await startScriptedServer({ script });
  const database = e2eDatabase(cwd);
  // Only what a child needs: no keys or cadre settings of the person running the tests.
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: cwd, NO_COLOR: '1', LANG: 'C.UTF-8', ...(queue ? { CADRE_QUEUE: queue } : {}) };

  function start(args: readonly string[], options: { input?: string; env?: Record<string, string> } = {}): CadreProcess {
    const child = spawn(process.execPath, [cadreBin, ...args], { cwd, env: { ...env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const output = { stdout: '', stderr: '' };
    const listeners = new Set<() => void>();
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      output.stderr += chunk;
      for (const listener of listeners) listener();
    });
    child.stdin!.end(options.input ?? '');
    const exited = new Promise<CadreResult>((resolveExit) => {
      child.on('close', (code, signal) => resolveExit({ code, signal, ...output }));
      // A process that cannot start (its folder gone) fails the call that started it, not the whole run.
      child.on('error', (error) =>
        resolveExit({ code: null, signal: null, stdout: output.stdout, stderr: `${output.stderr}cadre could not start: ${error.message}\n` }),
      );
    });
    function waitForStderr(pattern: RegExp, timeoutMs = 10_000): Promise<RegExpMatchArray> {
      return new Promise((resolveMatch, reject) => {
        const timer = setTimeout(() => done(new Error(`stderr never matched ${pattern}:\n${output.stderr}`)), timeoutMs);
        const check = () => {
          const match = output.stderr.match(pattern);
          if (match) done(undefined, match);
        };
        function done(error?: Error, match?: RegExpMatchArray) {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolveMatch(match!);
        }
        listeners.add(check);
        void exited.then(() => done(new Error(`cadre exited before stderr matched ${pattern}:\n${output.stderr}`)));
        check();
      });
    }
    return { child, output, exited, waitForStderr };
  }

  // With a queue, two workers carry out the workspace's runs, as `cadre worker` in the workspace.
  // One after the other: the first one creates the database.
  const workers: CadreProcess[] = [];
  for (let index = 0; queue && index < 2; index++) {
    const worker = start(['worker', '--db', database, '--model', 'openai-compatible:scripted', '--base-url', server.baseURL, '--concurrency', '8'], {
      env: options.workerEnv,
    });
    workers.push(worker);
    await worker.waitForStderr(/carrying out runs/, 30_000);
  }

  return {
    cwd,
    database,
    env,
    server,
    workers,
    modelFlags: ['--model', 'openai-compatible:scripted', '--base-url', server.baseURL, '--db', database],
    start,
    run: (args, options) => start(args, options).exited,
    async json<T>(args: readonly string[]): Promise<T> {
      const result = await start([...args, '--json', '--db', database]).exited;
      if (result.code !== 0) throw new Error(`cadre ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
      return JSON.parse(result.stdout) as T;
    },
    async close() {
      for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
      await Promise.all(workers.map((worker) => worker.exited));
      await server.close();
      await rm(cwd, { recursive: true, force: true });
    },
  };
}

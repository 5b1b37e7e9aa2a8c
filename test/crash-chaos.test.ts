import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { startScriptedServer, type ScriptedRequest, type ScriptedServer, type ScriptedTurn } from '../src/testing/index.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/store.ts';
import { checkChaos, seededRandom, type ChaosReport } from './helpers/chaos-checks.ts';
import { createWorkspace, type CadreProcess, type Workspace } from './helpers/cadre-cli.ts';
import { workersWorkspace } from './services/workers-fixtures.ts';

/**
 * Crash chaos: `cadre run` is killed with SIGKILL at random moments of a session whose parent
 * starts background, foreground and parallel runs, then restarted the way a person would
 * (`cadre run --session ID ...`, sometimes killed again while it recovers). After each recovery
 * that ran to its end, the session must be whole (see `checkChaos`). Each subagent lists, greps
 * and reads the whole workspace, the database's own files included (which the tools must refuse
 * without opening them: an open would drop the process's SQLite locks).
 *
 * Reproduce a failure with the seed it prints: `CADRE_CHAOS_SEED=<seed> npx vitest run test/crash-chaos.test.ts`.
 * Soak: `CADRE_CHAOS_ROUNDS=200` (about 3 s a round).
 */
const seed = Number(process.env.CADRE_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const rounds = Number(process.env.CADRE_CHAOS_ROUNDS ?? 8);

let workspace: Workspace | undefined;
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  await workspace?.close();
  server = undefined;
  workspace = undefined;
});

/** Every file in the workspace, the database and its -wal and -shm included, relative to it. */
function everyFile(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

const scout = `---
description: Looks around the workspace and reports what is there.
tools: [list_files, read_file, grep]
mode: subagent
---
You are the scout. List, search and read files, then report.
`;

/** The scripted model: the prompt of a round carries each subagent's delay, so the random plan lives in the test. */
function respond(request: ScriptedRequest): ScriptedTurn {
  const firstUser = request.messages.find((message) => message.role === 'user')?.content ?? '';
  if (request.system.includes('You are the scout')) {
    if (request.turn === 0)
      return {
        tool_calls: [
          { name: 'list_files', arguments: {} },
          { name: 'grep', arguments: { pattern: 'milk|app|SQLite' } },
        ],
      };
    if (request.turn === 1) return { tool_calls: everyFile(workspace!.cwd).map((path) => ({ name: 'read_file', arguments: { path } })) };
    return { text: `Report on ${firstUser}`, delay_ms: Number(/delay=(\d+)/.exec(firstUser)?.[1] ?? 0) };
  }
  const lastUser = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
  if (lastUser.startsWith('<subagent-notification>')) return { text: 'Noted.' };
  const plan = /^round (\d+): bg (\d+) (\d+); par (\d+) (\d+); fg (\d+)$/.exec(lastUser);
  if (!plan || request.turn > 0) return { text: plan ? `Round ${plan[1]} done.` : 'All quiet.' };
  const [, round, bgA, bgB, parA, parB, fg] = plan;
  const task = (label: string, delay: string) => `r${round}-${label} delay=${delay}`;
  return {
    tool_calls: [
      { name: 'agent', arguments: { agent: 'scout', task: task('bg1', bgA), description: `r${round} bg1`, run_in_background: true } },
      { name: 'agent', arguments: { agent: 'scout', task: task('bg2', bgB), description: `r${round} bg2`, run_in_background: true } },
      {
        name: 'agent_parallel',
        arguments: {
          tasks: [
            { agent: 'scout', task: task('par1', parA) },
            { agent: 'scout', task: task('par2', parB) },
          ],
        },
      },
      { name: 'agent', arguments: { agent: 'scout', task: task('fg', fg), description: `r${round} fg` } },
    ],
  };
}

/** Kills the process after `ms` unless it ended first; resolves whether it was killed. */
async function killAfter(process: CadreProcess, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const killed = await Promise.race([
    process.exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(process.child.kill('SIGKILL')), ms);
    }),
  ]);
  clearTimeout(timer);
  await process.exited;
  return killed;
}

/**
 * Kills the process `ms` after its first run started (or after `ms` once 20 s passed without one):
 * on a loaded machine a process can take seconds to start, and a kill before any run starts
 * tests nothing.
 */
async function killAfterStart(process: CadreProcess, ms: number): Promise<boolean> {
  await process.waitForStderr(/\] started/, 20_000).catch(() => undefined);
  return killAfter(process, ms);
}

/** What one chaos session went through, and its figures. */
interface ChaosOutcome {
  figures: Record<string, number | string>;
  /** Each broken invariant, with the round it was first seen in. */
  found: string[];
}

/**
 * Rounds of chaos on one session: each round's prompt starts background, parallel and foreground
 * runs; the host is killed at a random moment after its first run started (and, with
 * `killWorker`, often a worker too), sometimes killed again while it recovers, then recovered
 * with `cadre run --session` to its end, and the session checked (see `checkChaos`).
 */
async function chaosSession(options: {
  rounds: number;
  random: () => number;
  baseURL: string;
  openStore: () => Promise<Store>;
  killWorker?: () => Promise<boolean>;
}): Promise<ChaosOutcome> {
  const { rounds, random } = options;
  const between = (low: number, high: number) => String(Math.floor(low + random() * (high - low)));
  const flags = ['--model', 'openai-compatible:scripted', '--base-url', options.baseURL, '--db', workspace!.database];
  const opened = await workspace!.run(['run', ...flags, 'Hello, chaos.']);
  expect(opened.code, opened.stderr).toBe(0);
  const reader = await options.openStore();
  const [session] = await reader.listSessions({ primaryOnly: true });
  await reader.close();

  const violations = new Map<string, number>();
  let kills = 0;
  let workerKills = 0;
  let runs = 0;
  let owed = 0;
  let delivered = 0;
  let last: ChaosReport | undefined;
  for (let round = 1; round <= rounds; round++) {
    // Background runs end early, while the parent still waits on its foreground ones: the window
    // in which a notification waits for the parent's next model call.
    const prompt = `round ${round}: bg ${between(0, 300)} ${between(0, 300)}; par ${between(200, 900)} ${between(200, 900)}; fg ${between(200, 1200)}`;
    const host = workspace!.start(['run', ...flags, '--session', session.id, prompt]);
    const hostKilled = killAfterStart(host, Number(between(0, 2500)));
    // A worker dies in the same window, half the time.
    if (options.killWorker && random() < 0.5) {
      await new Promise((resolve) => setTimeout(resolve, Number(between(0, 2500))));
      if (await options.killWorker()) workerKills++;
    }
    if (await hostKilled) kills++;
    // Sometimes the recovery is killed too.
    if (random() < 0.25 && (await killAfter(workspace!.start(['run', ...flags, '--session', session.id, `recover ${round}`]), Number(between(500, 3000)))))
      kills++;
    const recovered = await workspace!.run(['run', ...flags, '--session', session.id, `check ${round}`]);
    const store = await options.openStore();
    last = await checkChaos(store, session.id);
    await store.close();
    if (recovered.code !== 0) last.violations.push(`round ${round}: cadre run --session exited ${recovered.code}: ${recovered.stderr.slice(-500)}`);
    for (const violation of last.violations) if (!violations.has(violation)) violations.set(violation, round);
    ({ runs, eligible: owed, delivered } = last);
  }
  const figures = { rounds, kills, worker_kills: workerKills, runs, notifications_owed: owed, delivered, lost: last!.lost, duplicated: last!.duplicated };
  return { figures, found: [...violations].map(([violation, round]) => `round ${round}: ${violation}`) };
}

describe('crash chaos', () => {
  it(`loses no run and no notification, and announces none twice, when cadre run is killed at random (seed ${seed}, ${rounds} rounds)`, {
    timeout: rounds * 20_000 + 30_000,
  }, async () => {
    workspace = await createWorkspace();
    await writeFile(join(workspace.cwd, '.cadre', 'agents', 'scout.md'), scout);
    server = await startScriptedServer({ script: respond });
    const { figures, found } = await chaosSession({
      rounds,
      random: seededRandom(seed),
      baseURL: server.baseURL,
      openStore: async () => createSqliteStore({ path: workspace!.database }),
    });
    console.log(`crash chaos: ${JSON.stringify({ seed, ...figures })}`);
    expect(figures.runs, 'no run started: every kill came before the host got going').not.toBe(0);
    expect(found, `crash chaos failed with CADRE_CHAOS_SEED=${seed}; figures ${JSON.stringify(figures)}`).toEqual([]);
  });
});

/**
 * The same chaos with runs carried out by two `cadre worker` processes (BullMQ on
 * `CADRE_TEST_REDIS_URL`, the store on `CADRE_TEST_POSTGRES_URL` when set, else the workspace's
 * SQLite file): besides the host, a worker is killed with SIGKILL at random and replaced, so that
 * two are always there. Soak: `CADRE_CHAOS_WORKER_ROUNDS=20` (five runs a round).
 */
describe.skipIf(!process.env.CADRE_TEST_REDIS_URL)('crash chaos on workers', () => {
  const workerRounds = Number(process.env.CADRE_CHAOS_WORKER_ROUNDS ?? 5);
  it(`loses no run and no notification, and announces none twice, when cadre run and cadre workers are killed at random (seed ${seed}, ${workerRounds} rounds)`, {
    timeout: workerRounds * 60_000 + 60_000,
  }, async () => {
    const random = seededRandom(seed);
    // The workspace's scripted model (the hosts' and the workers') answers with this test's script.
    workspace = await workersWorkspace({ script: respond, database: process.env.CADRE_TEST_POSTGRES_URL });
    await writeFile(join(workspace.cwd, '.cadre', 'agents', 'scout.md'), scout);
    const baseURL = workspace.server.baseURL;
    const startWorker = async () => {
      const worker = workspace!.start([
        'worker',
        '--db',
        workspace!.database,
        '--model',
        'openai-compatible:scripted',
        '--base-url',
        baseURL,
        '--concurrency',
        '8',
      ]);
      workspace!.workers.push(worker);
      await worker.waitForStderr(/carrying out runs/, 30_000);
    };
    /** Kills a worker that carries a run (else any), and starts another in its place. */
    const killWorker = async () => {
      const store = await openStore(workspace!.database);
      const active = await store.listRuns({ statuses: ['running'] });
      await store.close();
      const holders = new Set(active.map((run) => Number(run.lease_owner?.split(':')[1])));
      const living = workspace!.workers.filter((worker) => worker.child.exitCode === null && worker.child.signalCode === null);
      const victim = living.find((worker) => holders.has(worker.child.pid!)) ?? living[Math.floor(random() * living.length)];
      if (!victim) return false;
      victim.child.kill('SIGKILL');
      await victim.exited;
      workspace!.workers.splice(workspace!.workers.indexOf(victim), 1);
      await startWorker();
      return true;
    };
    const { figures, found } = await chaosSession({ rounds: workerRounds, random, baseURL, openStore: () => openStore(workspace!.database), killWorker });
    console.log(`crash chaos on workers: ${JSON.stringify({ seed, ...figures })}`);
    expect(figures.runs, 'no run started: every kill came before the host got going').not.toBe(0);
    expect(found, `crash chaos on workers failed with CADRE_CHAOS_SEED=${seed}; figures ${JSON.stringify(figures)}`).toEqual([]);
  });
});

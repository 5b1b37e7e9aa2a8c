/**
 * `npm run bench -- --only workers` (`node bench/worker-throughput.ts [--runs 1000] [--workers 1,2,4] [--quick]`):
 * runs carried out per second by 1, 2 and 4 worker processes (`createCadreWorker`, what
 * `cadre worker --concurrency 25` starts), each run one model call that takes 1 s (the scripted
 * model's `delay_ms`), on Postgres and a Redis queue (`CADRE_TEST_POSTGRES_URL`,
 * `CADRE_TEST_REDIS_URL`; skipped without them). The target: 4 workers ≥ 3.6× one.
 *
 * This process hosts the sessions (40 of them, each starting 25 background runs with one model
 * call, so the hosts' caps never hold the workers back) and times from the first message sent to
 * the last run finished; the workers are started and ready before. A second figure, "on the
 * workers", times from the first run a worker began (its first model step) to the last run's end:
 * the host's start of the 1,000 runs before it (1-3 s on 2 cores) weighs on four workers' 10 s
 * four times as much as on one worker's 40 s.
 *
 * Diagnostics: `CADRE_BENCH_WORKER_TIMES=1` prints how many runs began (first model step) and ended
 * on the workers each second, from the first message sent, and three
 * runs' event timelines; `CADRE_BENCH_WORKER_PROFILE=DIR` writes each worker's CPU profile there;
 * `CADRE_BENCH_WORKER_CPU=1` prints the CPU time per run of this process (the host), each worker,
 * the Postgres backends of the database and the Redis server, over the measured span.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { defineAgent } from '../src/agents/agent-definition.ts';
import { createRedisCoordination } from '../src/coordination/redis-coordination.ts';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { createCadreWorker } from '../src/runtime/create-cadre-worker.ts';
import { openPostgresStore } from '../src/store/postgres/postgres-store.ts';
import { scriptedLanguageModel } from '../src/testing/scripted-language-model.ts';
import { fixed, markdownTable, startClock } from './measure.ts';

const slowMarker = 'SLOW-WORKER';
const slow = defineAgent({ name: 'slow', description: 'Answers after one slow model call.', system: `${slowMarker}: answer.`, tools: [], mode: 'subagent' });

/** Runs each session starts (and the hosts' per-session cap). */
const runsPerSession = 25;

/** The model: a worker's one call takes `latencyMs`; a session starts its runs in one step. */
function throughputModel(latencyMs: number) {
  return scriptedLanguageModel([
    { when: { system_includes: slowMarker }, turns: [{ text: 'Checked; all is well.', delay_ms: latencyMs }] },
    { when: { last_user_includes: '<subagent-notification>' }, turns: [{ text: 'noted' }] },
    {
      turns: [
        {
          tool_calls: Array.from({ length: runsPerSession }, (_, index) => ({
            name: 'agent',
            arguments: { agent: 'slow', task: `Check part ${index}.`, description: `part ${index}`, run_in_background: true },
          })),
        },
        { text: 'started' },
      ],
    },
  ]);
}

interface WorkerArgs {
  db: string;
  queue: string;
  concurrency: number;
  latencyMs: number;
}

/** A worker process: carries out runs until its stdin closes; says `ready` once it takes jobs. */
async function workerProcess({ db, queue, concurrency, latencyMs }: WorkerArgs): Promise<void> {
  const store = await openPostgresStore({ connectionString: db });
  const worker = await createCadreWorker({
    store,
    queue,
    concurrency,
    model: throughputModel(latencyMs),
    agents: [slow],
    onError: (error) => console.error(error),
  });
  console.log('ready');
  // `cpu` on stdin: this process's CPU time so far (µs), for CADRE_BENCH_WORKER_CPU.
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'cpu') console.log(`cpu ${JSON.stringify(process.cpuUsage())}`);
  });
  await new Promise<void>((resolve) => process.stdin.on('end', resolve));
  await worker.close();
  await store.close();
}

function startWorker(args: WorkerArgs): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.CADRE_BENCH_WORKER_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CADRE_BENCH_WORKER_PROFILE}`] : []),
      import.meta.filename,
      '--worker',
      '--db',
      args.db,
      '--queue',
      args.queue,
      '--concurrency',
      String(args.concurrency),
      '--latency-ms',
      String(args.latencyMs),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (line === 'ready') resolve(child);
      if (line.startsWith('cpu ')) child.emit('cpu', JSON.parse(line.slice(4)));
    });
    child.on('exit', (code) => reject(new Error(`A worker exited (${code}) before it was ready.`)));
  });
}

/**
 * CPU time so far (ms) of each worker process (asked on its stdin), of the Postgres backends of
 * this database (`/proc/PID/stat`, the server on this machine), and of the Redis server (`INFO cpu`).
 */
async function cpuTimes(
  children: ChildProcess[],
  postgresUrl: string,
  redisUrl: string,
): Promise<{ workers: number[]; postgres: Map<number, number>; redis: number }> {
  const workers = await Promise.all(
    children.map(
      (child) =>
        new Promise<number>((resolve) => {
          child.once('cpu', (usage: NodeJS.CpuUsage) => resolve((usage.user + usage.system) / 1000));
          child.stdin!.write('cpu\n');
        }),
    ),
  );
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  await client.end();
  const ticksPerMs = 100 / 1000; // USER_HZ
  const postgres = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      postgres.set(pid, (Number(fields[11]) + Number(fields[12])) / ticksPerMs);
    } catch {
      // A backend that ended meanwhile.
    }
  }
  const redis = new Redis(redisUrl);
  const info = await redis.info('cpu');
  redis.disconnect();
  const seconds = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return { workers, postgres, redis: (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1000 };
}

/** One measurement: `runs` runs carried out by `workers` worker processes; runs per second. */
async function measure({
  postgresUrl,
  redisUrl,
  runs,
  workers,
  concurrency,
  latencyMs,
}: {
  postgresUrl: string;
  redisUrl: string;
  runs: number;
  workers: number;
  concurrency: number;
  latencyMs: number;
}): Promise<{ seconds: number; perSecond: number; onWorkers: number }> {
  const name = `cadre_bench_workers_${process.pid}_${workers}_${Date.now().toString(36)}`;
  const db = new URL(postgresUrl);
  db.searchParams.set('schema', name);
  const queue = new URL(redisUrl);
  queue.searchParams.set('prefix', name);
  const store = await openPostgresStore({ connectionString: db.toString() });
  const children: ChildProcess[] = [];
  const sessions = Math.ceil(runs / runsPerSession);
  // As `cadre run` with a queue: signals travel through Redis, to and from the workers.
  const coordination = createRedisCoordination({ url: queue.toString(), store, onError: (error) => console.error(error) });
  const cadre = createCadre({
    store,
    coordination,
    queue: queue.toString(),
    model: throughputModel(latencyMs),
    agents: [slow],
    limits: { maxActivePerParent: runsPerSession, maxQueuedPerParent: runsPerSession, maxActiveGlobal: sessions * runsPerSession },
    onError: (error) => console.error(error),
  });
  try {
    for (let index = 0; index < workers; index++) children.push(await startWorker({ db: db.toString(), queue: queue.toString(), concurrency, latencyMs }));
    const created = await Promise.all(Array.from({ length: sessions }, () => cadre.createSession()));
    const cpuBefore = process.env.CADRE_BENCH_WORKER_CPU ? await cpuTimes(children, postgresUrl, redisUrl) : undefined;
    const elapsed = startClock();
    const t0 = Date.now();
    await Promise.all(created.map((session) => cadre.send(session.id, 'Start the checks.')));
    await Promise.all(created.map((session) => cadre.waitForIdle(session.id)));
    const { wallMs, cpuMs } = elapsed();
    const seconds = wallMs / 1000;
    if (cpuBefore) {
      const after = await cpuTimes(children, postgresUrl, redisUrl);
      const total = sessions * runsPerSession;
      const perRun = (ms: number) => fixed(ms / total, 2);
      const workersMs = after.workers.map((ms, index) => ms - cpuBefore.workers[index]);
      const postgresMs = [...after.postgres].reduce((sum, [pid, ms]) => sum + ms - (cpuBefore.postgres.get(pid) ?? 0), 0);
      const redisMs = after.redis - cpuBefore.redis;
      const all = cpuMs + workersMs.reduce((sum, ms) => sum + ms, 0) + postgresMs + redisMs;
      console.error(
        `CPU ms per run (${workers} worker${workers === 1 ? '' : 's'}): host ${perRun(cpuMs)}, workers ${workersMs.map(perRun).join(' + ')}, Postgres backends ${perRun(postgresMs)}, Redis ${perRun(redisMs)}; all ${perRun(all)} (${fixed(all / wallMs, 2)} cores over ${fixed(seconds, 1)} s)`,
      );
    }
    const finished = await store.listRuns({ statuses: ['completed'] });
    if (finished.length !== sessions * runsPerSession) throw new Error(`${finished.length} of ${sessions * runsPerSession} runs completed.`);
    const ms = (at: string | null) => (at ? Date.parse(at) : Number.NaN);
    // When a worker began each run: its first model step (the host moved it to `running` before it sent the job).
    const began = await Promise.all(
      finished.map(async (run) => ms((await store.listRunEvents(run.id)).find((event) => event.type === 'step-start')?.at ?? null)),
    );
    const ends = finished.map((run) => ms(run.ended_at));
    // The workers' own pace: from the first run a worker began to the last run's end, without the
    // host's start of the 1,000 runs before it (1-3 s) and its parents' last turns after it.
    const onWorkers = finished.length / ((Math.max(...ends) - Math.min(...began)) / 1000);
    if (process.env.CADRE_BENCH_WORKER_TIMES) {
      const work = ends.map((end, index) => end - began[index]).sort((a, b) => a - b);
      const quantile = (values: number[], q: number) => values[Math.floor(q * (values.length - 1))];
      const lastEnd = Math.max(...ends) - t0;
      console.error(
        `${workers} worker(s): first step on a worker +${Math.round(Math.min(...began) - t0)} ms; last end +${Math.round(lastEnd)} ms; all idle +${Math.round(wallMs)} ms; worker's first step to run end p50 ${quantile(work, 0.5)} ms, p90 ${quantile(work, 0.9)}, max ${work.at(-1)}`,
      );
      const perSecond = (times: number[], second: number) => times.filter((at) => at - t0 >= second * 1000 && at - t0 < (second + 1) * 1000).length;
      const seconds = Array.from({ length: Math.ceil(lastEnd / 1000) }, (_, second) => `${second}s ${perSecond(began, second)}/${perSecond(ends, second)}`);
      console.error(`runs begun/ended on the workers each second: ${seconds.join(', ')}`);
      // The timelines of the run begun first, of the middle one and of the last one.
      const order = finished.map((_, index) => index).sort((a, b) => began[a] - began[b]);
      for (const run of [order[0], order[order.length >> 1], order.at(-1)!].map((index) => finished[index])) {
        const events = await store.listRunEvents(run.id);
        console.error(
          run.id,
          events.map((event) => `${event.type}${event.type === 'activity' ? JSON.stringify(event.data) : ''}@${Math.round(ms(event.at) - t0)}`).join(' '),
        );
      }
    }
    return { seconds, perSecond: finished.length / seconds, onWorkers };
  } finally {
    for (const child of children) child.stdin!.end();
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode === null ? child.on('exit', resolve) : resolve(null)))));
    await cadre.close();
    await coordination.close();
    await store.close();
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    await client.end();
  }
}

/** The throughput figures as Markdown. */
export async function runWorkerThroughput({
  postgresUrl,
  redisUrl,
  runs = 1000,
  workerCounts = [1, 2, 4],
  concurrency = 25,
  latencyMs = 1000,
}: {
  postgresUrl?: string;
  redisUrl?: string;
  runs?: number;
  workerCounts?: number[];
  concurrency?: number;
  latencyMs?: number;
}): Promise<string> {
  if (!postgresUrl || !redisUrl) return '## Worker throughput\n\nskipped: needs CADRE_TEST_POSTGRES_URL and CADRE_TEST_REDIS_URL';
  const rows: string[][] = [];
  let one: { perSecond: number; onWorkers: number } | undefined;
  for (const workers of workerCounts) {
    const { seconds, perSecond, onWorkers } = await measure({ postgresUrl, redisUrl, runs, workers, concurrency, latencyMs });
    one ??= workers === 1 ? { perSecond, onWorkers } : undefined;
    rows.push([
      String(workers),
      String(runs),
      fixed(seconds, 1),
      fixed(perSecond, 1),
      one === undefined ? 'n/a' : fixed(perSecond / one.perSecond, 2),
      fixed(onWorkers, 1),
      one === undefined ? 'n/a' : fixed(onWorkers / one.onWorkers, 2),
      fixed((workers * concurrency * 1000) / latencyMs, 0),
    ]);
  }
  const table = markdownTable(
    [
      `worker processes (concurrency ${concurrency})`,
      'runs',
      'seconds',
      'runs per second',
      '× one worker',
      'on the workers: runs per second',
      '× one worker',
      'ideal runs per second',
    ],
    rows,
  );
  return `## Worker throughput\n\n${table}\n\nEach run is one model call of ${latencyMs} ms; target: 4 workers ≥ 3.6× one. Runs per second: from the first message sent to the last parent idle; on the workers: from the first run a worker began to the last run's end (without the host's start of the runs before it).`;
}

const { values } = parseArgs({
  options: {
    worker: { type: 'boolean', default: false },
    db: { type: 'string' },
    queue: { type: 'string' },
    concurrency: { type: 'string' },
    'latency-ms': { type: 'string' },
    runs: { type: 'string' },
    workers: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
  strict: false,
});

if (values.worker) {
  await workerProcess({
    db: values.db as string,
    queue: values.queue as string,
    concurrency: Number(values.concurrency),
    latencyMs: Number(values['latency-ms']),
  });
} else if (import.meta.main) {
  console.log(
    await runWorkerThroughput({
      postgresUrl: process.env.CADRE_TEST_POSTGRES_URL,
      redisUrl: process.env.CADRE_TEST_REDIS_URL,
      runs: values.quick ? 100 : Number(values.runs ?? 1000),
      workerCounts: typeof values.workers === 'string' ? values.workers.split(',').map(Number) : values.quick ? [1, 2] : [1, 2, 4],
    }),
  );
}

/**
 * `npm run bench -- --only workers` (`node bench/worker-throughput.ts [--runs 1000] [--workers 1,2,4] [--quick]`):
 * runs carried out per second by 1, 2 and 4 worker processes (`createCadreWorker`, what
 * `cadre worker --concurrency 25` starts), each run one model call that takes 1 s (the scripted
 * model's `delay_ms`), on Postgres and a Redis queue (`CADRE_TEST_POSTGRES_URL`,
 * `CADRE_TEST_REDIS_URL`; skipped without them). The target: 4 workers ≥ 3.6× one.
 *
 * This process hosts the sessions (40 of them, each starting 25 background runs with one model
 * call, so the hosts' caps never hold the workers back) and times from the first message sent to
 * the last run finished; the workers are started and ready before.
 *
 * Diagnostics: `CADRE_BENCH_WORKER_TIMES=1` prints how many runs worked each second and three
 * runs' event timelines; `CADRE_BENCH_WORKER_PROFILE=DIR` writes each worker's CPU profile there.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
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
  await new Promise<void>((resolve) => process.stdin.on('end', resolve).resume());
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
    });
    child.on('exit', (code) => reject(new Error(`A worker exited (${code}) before it was ready.`)));
  });
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
}): Promise<{ seconds: number; perSecond: number }> {
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
    const elapsed = startClock();
    await Promise.all(created.map((session) => cadre.send(session.id, 'Start the checks.')));
    await Promise.all(created.map((session) => cadre.waitForIdle(session.id)));
    const seconds = elapsed().wallMs / 1000;
    const finished = await store.listRuns({ statuses: ['completed'] });
    if (finished.length !== sessions * runsPerSession) throw new Error(`${finished.length} of ${sessions * runsPerSession} runs completed.`);
    if (process.env.CADRE_BENCH_WORKER_TIMES) {
      const ms = (at: string | null) => (at ? Date.parse(at) : Number.NaN);
      const spans = finished.map((run) => [ms(run.created_at), ms(run.started_at), ms(run.ended_at)]).sort((a, b) => a[1] - b[1]);
      const t0 = Math.min(...spans.map((span) => span[0]));
      const work = spans.map((span) => span[2] - span[1]).sort((a, b) => a - b);
      const quantile = (values: number[], q: number) => values[Math.floor(q * (values.length - 1))];
      console.error(
        `run work ms p50 ${quantile(work, 0.5)} p90 ${quantile(work, 0.9)} max ${work.at(-1)}; first start +${spans[0][1] - t0} ms; last end +${Math.max(...spans.map((span) => span[2])) - t0} ms`,
      );
      for (let second = 0; second * 1000 < Math.max(...spans.map((span) => span[2])) - t0; second++) {
        const at = t0 + second * 1000;
        const running = spans.filter((span) => span[1] <= at && span[2] > at).length;
        console.error(`t=${second}s running ${running}`);
      }
      for (const run of [finished[10], finished[120], finished[240]]) {
        const events = await store.listRunEvents(run.id);
        console.error(
          run.id,
          events.map((event) => `${event.type}${event.type === 'activity' ? JSON.stringify(event.data) : ''}@${ms(event.at) - t0}`).join(' '),
        );
      }
    }
    return { seconds, perSecond: finished.length / seconds };
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
  let one: number | undefined;
  for (const workers of workerCounts) {
    const { seconds, perSecond } = await measure({ postgresUrl, redisUrl, runs, workers, concurrency, latencyMs });
    one ??= workers === 1 ? perSecond : undefined;
    rows.push([
      String(workers),
      String(runs),
      fixed(seconds, 1),
      fixed(perSecond, 1),
      one === undefined ? 'n/a' : fixed(perSecond / one, 2),
      fixed((workers * concurrency * 1000) / latencyMs, 0),
    ]);
  }
  const table = markdownTable(
    [`worker processes (concurrency ${concurrency})`, 'runs', 'seconds', 'runs per second', '× one worker', 'ideal runs per second'],
    rows,
  );
  return `## Worker throughput\n\n${table}\n\nEach run is one model call of ${latencyMs} ms; target: 4 workers ≥ 3.6× one.`;
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

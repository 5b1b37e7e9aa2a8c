/**
 * `npm run bench -- --only postgres` (needs `CADRE_TEST_POSTGRES_URL`): the two Postgres targets
 * of issue 37, cadre on Postgres against cadre on a SQLite file, both in one process taking turns
 * round by round (every other round in reverse, as `compare-builds.ts` does):
 *
 * - *CPU per model call*: the fan-out round (N=20, 5 tool calls each) on the instant bench model;
 *   the process's CPU time (`process.cpuUsage`, every thread) over the round's model calls.
 *   Target: Postgres ≤ 2× SQLite.
 * - *Runs per second with a real model's latency*: every model call waits 200 ms (a timer); 200
 *   runs at once (N=200, 3 tool calls each); runs per second = N / the round's wall time.
 *   Target: Postgres ≥ 0.95× SQLite.
 *
 * `CADRE_BENCH_PG_BASE=/path/to/other/checkout` adds a third case taking turns with the two: the
 * Postgres store of that checkout (its `src/store/postgres/postgres-store.ts`, with this
 * checkout's runtime), to measure a change of the store before and after in one process (a copy
 * of `src/` from `git archive`, with `node_modules` linked beside it, will do).
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { openPostgresStore } from '../src/store/postgres/postgres-store.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';
import { type BenchModel, createBenchModel } from './bench-model.ts';
import { createErrorSink, fanOutRound, noopTool, workerAgent } from './bench-tools.ts';
import { collectGarbage, fixed, markdownTable, median, quantile } from './measure.ts';

/** What `runPostgresRatio` measures; the defaults are the issue's. */
export interface PostgresRatioOptions {
  postgresUrl: string;
  /** Rounds per store for the CPU ratio (instant model, N=20, T=5). */
  cpuRounds?: number;
  /** Rounds per store for the runs-per-second ratio (200 ms model, N=200, T=3). */
  latencyRounds?: number;
  /** Runs at once in the latency part. */
  latencyFanOut?: number;
  /** The model's latency in ms in the latency part. */
  latencyMs?: number;
  /** Another checkout whose Postgres store takes turns too (see the module's comment). */
  baseCheckout?: string;
}

interface StoreCase {
  name: string;
  round: () => Promise<void>;
  close: () => Promise<void>;
  wallMs: number[];
  cpuPerCall: number[];
}

async function openCases(model: BenchModel, fanOut: number, postgresUrl: string, schema: string, folder: string, baseCheckout?: string): Promise<StoreCase[]> {
  const limits = { maxActivePerParent: fanOut, maxQueuedPerParent: Math.max(50, fanOut), maxActiveGlobal: Math.max(64, fanOut) };
  const url = new URL(postgresUrl);
  url.searchParams.set('schema', schema);
  const stores: Array<[string, Store]> = [
    ['cadre (SQLite file)', createSqliteStore({ path: join(folder, `${schema}.db`) })],
    ['cadre (Postgres)', await openPostgresStore({ connectionString: url.toString() })],
  ];
  if (baseCheckout) {
    const base = (await import(pathToFileURL(join(baseCheckout, 'src/store/postgres/postgres-store.ts')).href)) as {
      openPostgresStore: typeof openPostgresStore;
    };
    url.searchParams.set('schema', `${schema}_base`);
    stores.push(['cadre (Postgres, base checkout)', await base.openPostgresStore({ connectionString: url.toString() })]);
  }
  return stores.map(([name, store]) => {
    const errors = createErrorSink();
    const cadre = createCadre({ store, model, agents: [workerAgent], tools: { noop: noopTool }, limits, onError: errors.report });
    return {
      name,
      wallMs: [],
      cpuPerCall: [],
      async round() {
        await fanOutRound(cadre, errors, name);
      },
      async close() {
        await cadre.close();
        await store.close();
      },
    };
  });
}

/** Warm-up rounds, then `rounds` measured rounds per case, taking turns. */
async function takeTurns(cases: StoreCase[], model: BenchModel, rounds: number, warmUp: number): Promise<void> {
  for (const each of cases) for (let index = 0; index < warmUp; index++) await each.round();
  for (let index = 0; index < rounds; index++) {
    for (const each of index % 2 === 0 ? cases : [...cases].reverse()) {
      collectGarbage();
      const calls = model.calls;
      const cpu = process.cpuUsage();
      const start = performance.now();
      await each.round();
      each.wallMs.push(performance.now() - start);
      const used = process.cpuUsage(cpu);
      each.cpuPerCall.push((used.user + used.system) / (model.calls - calls));
    }
  }
}

async function dropSchemas(postgresUrl: string, schemas: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/** Measures both Postgres targets and returns them as Markdown tables. */
export async function runPostgresRatio({
  postgresUrl,
  cpuRounds = 30,
  latencyRounds = 6,
  latencyFanOut = 200,
  latencyMs = 200,
  baseCheckout = process.env.CADRE_BENCH_PG_BASE,
}: PostgresRatioOptions): Promise<string> {
  const folder = mkdtempSync(join(tmpdir(), 'cadre-pg-ratio-'));
  const tag = `${process.pid}_${Date.now().toString(36)}`;
  const schemas = [`cadre_ratio_cpu_${tag}`, `cadre_ratio_lat_${tag}`];
  if (baseCheckout) schemas.push(...schemas.map((schema) => `${schema}_base`));
  const out: string[] = [];
  try {
    const cpuModel = createBenchModel({ fanOut: 20, background: false, toolCalls: 5, answerChars: 2000 });
    const cpuCases = await openCases(cpuModel, 20, postgresUrl, schemas[0], folder, baseCheckout);
    try {
      await takeTurns(cpuCases, cpuModel, cpuRounds, 3);
    } finally {
      for (const each of cpuCases) await each.close();
    }
    const [sqlite, postgres] = cpuCases.map((each) => median(each.cpuPerCall));
    out.push(
      markdownTable(
        [`CPU per model call (instant model, N=20, T=5, ${cpuRounds} rounds each, taking turns)`, 'CPU µs per call (median)', 'p25', 'p75', '× SQLite'],
        cpuCases.map((each) => [
          each.name,
          fixed(median(each.cpuPerCall)),
          fixed(quantile(each.cpuPerCall, 0.25)),
          fixed(quantile(each.cpuPerCall, 0.75)),
          fixed(median(each.cpuPerCall) / sqlite, 2),
        ]),
      ),
      `\nPostgres CPU per call: ${fixed(postgres / sqlite, 2)}× SQLite's (target ≤ 2×: ${postgres / sqlite <= 2 ? 'met' : 'missed'}).\n`,
    );

    const latencyModel = createBenchModel({ fanOut: latencyFanOut, background: false, toolCalls: 3, answerChars: 2000, latencyMs });
    const latencyCases = await openCases(latencyModel, latencyFanOut, postgresUrl, schemas[1], folder, baseCheckout);
    try {
      await takeTurns(latencyCases, latencyModel, latencyRounds, 1);
    } finally {
      for (const each of latencyCases) await each.close();
    }
    // Runs per second of a round: its N runs over its wall time (the parent's two calls included).
    const runsPerSecond = (each: StoreCase) => each.wallMs.map((ms) => latencyFanOut / (ms / 1000));
    const [sqliteRate, postgresRate] = latencyCases.map((each) => median(runsPerSecond(each)));
    const ideal = latencyFanOut / (((3 + 1 + 2) * latencyMs) / 1000);
    out.push(
      markdownTable(
        [
          `${latencyFanOut} runs at once, model latency ${latencyMs} ms, T=3 (${latencyRounds} rounds each, taking turns)`,
          'round wall s (median)',
          'runs per second (median)',
          'CPU µs per call',
          '× SQLite',
        ],
        latencyCases.map((each) => [
          each.name,
          fixed(median(each.wallMs) / 1000, 2),
          fixed(median(runsPerSecond(each)), 1),
          fixed(median(each.cpuPerCall)),
          fixed(median(runsPerSecond(each)) / sqliteRate, 3),
        ]),
      ),
      `\nPostgres runs per second: ${fixed(postgresRate / sqliteRate, 3)}× SQLite's (target ≥ 0.95×: ${postgresRate / sqliteRate >= 0.95 ? 'met' : 'missed'}). A round's floor is 6 model latencies (the parent's two calls and each run's four): ${fixed(ideal, 1)} runs per second.`,
    );
  } finally {
    await dropSchemas(postgresUrl, schemas);
    rmSync(folder, { recursive: true, force: true });
  }
  return out.join('\n');
}

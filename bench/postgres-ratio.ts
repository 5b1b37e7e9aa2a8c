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
 * `CADRE_BENCH_PG_TIME=1` times every store call of the latency part (how long each waited, from
 * the call to its promise settling) and adds a table of the mean wait per method and case.
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
  /** Per store method: calls and the ms they waited in all (with `CADRE_BENCH_PG_TIME`). */
  waits: Map<string, { calls: number; ms: number }>;
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
  return stores.map(([name, plain]) => {
    const errors = createErrorSink();
    const waits = new Map<string, { calls: number; ms: number }>();
    const store = process.env.CADRE_BENCH_PG_TIME ? timedStore(plain, waits) : plain;
    const cadre = createCadre({ store, model, agents: [workerAgent], tools: { noop: noopTool }, limits, onError: errors.report });
    return {
      name,
      waits,
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

/**
 * The server's time per kind of statement on pipelined connections (the store's writer): the
 * time from the answer before to each answer, while statements wait their turn on the wire, is
 * what the server spent on it. Kinds are the statement's first words; per round of the last case run.
 */
const serverMs = new Map<string, { count: number; ms: number; bytes: number }>();

function timeServer(): void {
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  const lastAnswer = new WeakMap<object, number>();
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const result = query.apply(this, args);
    if (!(this as unknown as { pipeline?: boolean }).pipeline || !(result instanceof Promise)) return result;
    const config = args[0] as string | { text: string; values?: unknown[] };
    const text = typeof config === 'string' ? config : config.text;
    const values = typeof config === 'string' ? [] : (config.values ?? []);
    const kind = text.replace(/\s+/g, ' ').slice(0, 40);
    const sentAt = performance.now();
    const record = () => {
      const now = performance.now();
      const since = Math.max(sentAt, lastAnswer.get(this) ?? sentAt);
      lastAnswer.set(this, now);
      const entry = serverMs.get(kind) ?? { count: 0, ms: 0, bytes: 0 };
      entry.count++;
      entry.ms += now - since;
      entry.bytes += text.length + values.reduce<number>((sum, value) => sum + (typeof value === 'string' || Buffer.isBuffer(value) ? value.length : 8), 0);
      serverMs.set(kind, entry);
    };
    result.then(record, record);
    return result;
  } as typeof pg.Client.prototype.query;
}

function serverTable(rounds: number): string {
  const rows = [...serverMs.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 10);
  return markdownTable(
    ['writer statement (first words)', 'per round', 'ms per round', 'mean ms', 'mean KB'],
    rows.map(([kind, entry]) => [
      kind,
      fixed(entry.count / rounds),
      fixed(entry.ms / rounds),
      fixed(entry.ms / entry.count, 1),
      fixed(entry.bytes / entry.count / 1024, 1),
    ]),
  );
}

/** `store` with every call that returns a promise timed into `waits` (by method). */
function timedStore(store: Store, waits: Map<string, { calls: number; ms: number }>): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      return (...args: unknown[]) => {
        const result = value.apply(target, args);
        if (!(result instanceof Promise)) return result;
        const start = performance.now();
        const record = () => {
          const entry = waits.get(key) ?? { calls: 0, ms: 0 };
          entry.calls++;
          entry.ms += performance.now() - start;
          waits.set(key, entry);
        };
        result.then(record, record);
        return result;
      };
    },
  });
}

/** The mean wait per store method of each case, as a Markdown table (the methods waited on most first). */
function waitTable(cases: StoreCase[]): string {
  const methods = [...new Set(cases.flatMap((each) => [...each.waits.keys()]))];
  const total = (method: string) => Math.max(...cases.map((each) => each.waits.get(method)?.ms ?? 0));
  methods.sort((a, b) => total(b) - total(a));
  return markdownTable(
    ['store call: mean ms waited (calls per round)', ...cases.map((each) => each.name)],
    methods.slice(0, 12).map((method) => [
      method,
      ...cases.map((each) => {
        const entry = each.waits.get(method);
        return entry ? `${fixed(entry.ms / entry.calls, 1)} (${fixed(entry.calls / each.wallMs.length)})` : '';
      }),
    ]),
  );
}

/** Warm-up rounds, then `rounds` measured rounds per case, taking turns. */
async function takeTurns(cases: StoreCase[], model: BenchModel, rounds: number, warmUp: number): Promise<void> {
  for (const each of cases) for (let index = 0; index < warmUp; index++) await each.round();
  for (const each of cases) each.waits.clear();
  serverMs.clear();
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
    if (process.env.CADRE_BENCH_PG_TIME) timeServer();
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
      process.env.CADRE_BENCH_PG_TIME ? `\n${waitTable(latencyCases)}\n\n${serverTable(latencyRounds * (latencyCases.length - 1))}\n` : '',
      `\nPostgres runs per second: ${fixed(postgresRate / sqliteRate, 3)}× SQLite's (target ≥ 0.95×: ${postgresRate / sqliteRate >= 0.95 ? 'met' : 'missed'}). A round's floor is 6 model latencies (the parent's two calls and each run's four): ${fixed(ideal, 1)} runs per second.`,
    );
  } finally {
    await dropSchemas(postgresUrl, schemas);
    rmSync(folder, { recursive: true, force: true });
  }
  return out.join('\n');
}

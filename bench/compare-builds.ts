/**
 * `node --expose-gc bench/compare-builds.ts [--rounds 100] [--sqlite] [--fan-out 20] NAME=DIR ...`: the
 * fan-out round of `scale-out.ts` (N=20 unless `--fan-out` says, 5 tool calls each) for several checkouts of cadre in one process,
 * taking turns round by round with bare `generateText`, on Postgres (`CADRE_TEST_POSTGRES_URL`,
 * each build in a schema of its own) or, with `--sqlite`, on a SQLite file each. On a machine
 * others share, a build measured a minute after another meets another load; taking turns, each
 * build meets the same. Per build: µs per model call (median, p25), the process's CPU per call
 * (every thread), and how long the event loop waited per call (for the database, mostly).
 *
 * A checkout is `git archive <commit> | tar -x -C DIR` with `node_modules` linked to this one's.
 * @module
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createBenchModel } from './bench-model.ts';
// The round itself comes from this checkout: it calls only a cadre's public methods, so it serves every build.
import { fanOutRound } from './bench-tools.ts';
import { bareFanOutRound } from './fanout-bare.ts';
import { collectGarbage, fixed, markdownTable, median, quantile } from './measure.ts';

const { values, positionals } = parseArgs({
  options: { rounds: { type: 'string', default: '100' }, sqlite: { type: 'boolean', default: false }, 'fan-out': { type: 'string', default: '20' } },
  allowPositionals: true,
});
const rounds = Number(values.rounds);
const postgresUrl = process.env.CADRE_TEST_POSTGRES_URL;
if (positionals.length === 0 || (!values.sqlite && !postgresUrl)) {
  console.log('usage: CADRE_TEST_POSTGRES_URL=... node --expose-gc bench/compare-builds.ts [--rounds 100] [--sqlite] NAME=DIR ...');
  process.exit(2);
}

interface Case {
  name: string;
  round: () => Promise<void>;
  close: () => Promise<void>;
  /** Per round, per model call: wall µs, CPU µs, event-loop idle µs. */
  wall: number[];
  cpu: number[];
  idle: number[];
}

const fanOut = Number(values['fan-out']);
if (!Number.isInteger(fanOut) || fanOut < 1) throw new TypeError(`--fan-out must be a whole number of runs, not '${values['fan-out']}'.`);
const model = createBenchModel({ fanOut, background: false, toolCalls: 5, answerChars: 2000 });
// Every run of a round active at once (as at N=20 with the defaults of scale-out.ts).
const limits = { maxActivePerParent: fanOut, maxQueuedPerParent: Math.max(50, fanOut), maxActiveGlobal: Math.max(64, fanOut) };
const schemas: string[] = [];
const cases: Case[] = [];
for (const entry of positionals) {
  const [name, folder] = entry.includes('=') ? (entry.split('=', 2) as [string, string]) : [entry, entry];
  const root = resolve(folder);
  const { createCadre } = await import(join(root, 'src/runtime/create-cadre.ts'));
  const { createErrorSink, noopTool, workerAgent } = await import(join(root, 'bench/bench-tools.ts'));
  let store;
  if (values.sqlite) {
    const { createSqliteStore } = await import(join(root, 'src/store/sqlite/sqlite-store.ts'));
    store = createSqliteStore({ path: join(mkdtempSync(join(tmpdir(), 'cadre-compare-')), 'cadre.db') });
  } else {
    const { openPostgresStore } = await import(join(root, 'src/store/postgres/postgres-store.ts'));
    const schema = `cadre_compare_${process.pid}_${cases.length}`;
    schemas.push(schema);
    const url = new URL(postgresUrl!);
    url.searchParams.set('schema', schema);
    store = await openPostgresStore({ connectionString: url.toString() });
  }
  const errors = createErrorSink();
  const cadre = createCadre({ store, model, agents: [workerAgent], tools: { noop: noopTool }, limits, onError: errors.report });
  cases.push({
    name,
    wall: [],
    cpu: [],
    idle: [],
    async round() {
      await fanOutRound(cadre, errors, name);
    },
    async close() {
      await cadre.close();
      await store.close();
    },
  });
}
cases.push({
  name: 'bare generateText',
  wall: [],
  cpu: [],
  idle: [],
  round: () => bareFanOutRound({ call: 'generateText', model, toolCalls: 5 }).then(() => {}),
  close: async () => {},
});

try {
  for (const each of cases) for (let index = 0; index < 3; index++) await each.round();
  for (let index = 0; index < rounds; index++) {
    // Every other round in reverse, so no build always follows the same one.
    for (const each of index % 2 === 0 ? cases : [...cases].reverse()) {
      collectGarbage();
      const calls = model.calls;
      const cpu = process.cpuUsage();
      const loop = performance.eventLoopUtilization();
      const start = performance.now();
      await each.round();
      const count = model.calls - calls;
      each.wall.push(((performance.now() - start) * 1000) / count);
      const used = process.cpuUsage(cpu);
      each.cpu.push((used.user + used.system) / count);
      each.idle.push((performance.eventLoopUtilization(loop).idle * 1000) / count);
    }
  }
} finally {
  for (const each of cases) await each.close();
  if (schemas.length > 0) {
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}
const bare = median(cases.at(-1)!.wall);
console.log(
  markdownTable(
    [
      `build (${values.sqlite ? 'SQLite' : 'Postgres'}, N=${fanOut}, ${rounds} rounds each, taking turns)`,
      'µs per model call (median)',
      'p25',
      '× bare generateText',
      'CPU µs per call',
      'event loop idle µs per call',
    ],
    cases.map((each) => [
      each.name,
      fixed(median(each.wall)),
      fixed(quantile(each.wall, 0.25)),
      fixed(median(each.wall) / bare, 2),
      fixed(median(each.cpu)),
      fixed(median(each.idle)),
    ]),
  ),
);

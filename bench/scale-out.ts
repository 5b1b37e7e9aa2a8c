/**
 * `node bench/scale-out.ts [--postgres URL] [--quick]` (also `npm run bench -- --only scale`):
 * the scale-out figures. Fan-out (N=20 subagents, 5 tool calls each) per model call on Postgres
 * next to a SQLite file and the bare AI SDK; and the latency of a signal between two processes
 * on one Postgres database (a stop request, a pending notification) through LISTEN/NOTIFY,
 * p50/p99, which need a Postgres server (`--postgres` or `CADRE_TEST_POSTGRES_URL`); and the
 * latency of a stop request between two processes on one SQLite file (no server needed).
 * @module
 */
import { spawn } from 'node:child_process';
import { Socket } from 'node:net';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { createPollingCoordination } from '../src/coordination/polling-coordination.ts';
import { createPostgresCoordination } from '../src/coordination/postgres-coordination.ts';
import { eventFixture, runFixture } from '../src/store/store-fixtures.ts';
import { openPostgresStore } from '../src/store/postgres/postgres-store.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';
import { createBenchModel } from './bench-model.ts';
import { createErrorSink, fanOutRound, noopTool, workerAgent } from './bench-tools.ts';
import { bareFanOutRound } from './fanout-bare.ts';
import { collectGarbage, fixed, markdownTable, median, quantile, startClock, temporaryFolder } from './measure.ts';

// Not strict: `npm run bench` (bench/run.ts) imports this with its own flags.
const { values } = parseArgs({
  options: { postgres: { type: 'string' }, quick: { type: 'boolean', default: false }, publisher: { type: 'string' }, 'sqlite-publisher': { type: 'string' } },
  strict: false,
});
const postgresUrl = (values.postgres as string | undefined) ?? process.env.CADRE_TEST_POSTGRES_URL;

/** A schema of its own for one measurement, dropped afterwards. */
async function withSchema<T>(work: (url: string) => Promise<T>): Promise<T> {
  const schema = `cadre_bench_${process.pid}_${Date.now().toString(36)}`;
  const url = new URL(postgresUrl!);
  url.searchParams.set('schema', schema);
  try {
    return await work(url.toString());
  } finally {
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}

/**
 * Counts what the Postgres store sends while `counting` is on: statements (`pg` queries) and
 * writes to the server's socket (each a system call and a wake-up of the server; the store sends
 * a batch of statements in one).
 */
function countPostgresTraffic(): { counting: boolean; statements: number; writes: number } {
  const counts = { counting: false, statements: 0, writes: 0 };
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  (pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: unknown, ...args: unknown[]) {
    if (counts.counting) counts.statements++;
    return query.apply(this, args);
  };
  // The stream methods a socket implements its writes with: one call per write to the kernel.
  const socket = Socket.prototype as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method];
    socket[method] = function (this: unknown, ...args: unknown[]) {
      if (counts.counting) counts.writes++;
      return original.apply(this, args);
    };
  }
  return counts;
}

async function fanOut(rounds: number, warmUp: number): Promise<string> {
  const size = { fanOut: 20, toolCalls: 5 };
  const model = createBenchModel({ fanOut: size.fanOut, background: false, toolCalls: size.toolCalls, answerChars: 2000 });
  const limits = { maxActivePerParent: 20, maxQueuedPerParent: 50, maxActiveGlobal: 64 };
  const folder = temporaryFolder('cadre-bench-scale');
  const traffic = countPostgresTraffic();
  return withSchema(async (url) => {
    const stores: Array<[string, Store]> = [
      ['cadre (SQLite file)', createSqliteStore({ path: `${folder.path}/cadre.db` })],
      ['cadre (Postgres)', await openPostgresStore({ connectionString: url })],
    ];
    const cases: Array<{ name: string; round: () => Promise<unknown>; perCall: number[]; postgres?: boolean }> = [
      { name: 'bare streamText', round: () => bareFanOutRound({ call: 'streamText', model, toolCalls: size.toolCalls }), perCall: [] },
      { name: 'bare generateText', round: () => bareFanOutRound({ call: 'generateText', model, toolCalls: size.toolCalls }), perCall: [] },
    ];
    const runtimes = stores.map(([name, store]) => {
      const errors = createErrorSink();
      const cadre = createCadre({ store, model, agents: [workerAgent], tools: { noop: noopTool }, limits, onError: errors.report });
      cases.push({
        name,
        perCall: [],
        postgres: name.includes('Postgres'),
        async round() {
          await fanOutRound(cadre, errors, name);
        },
      });
      return cadre;
    });
    let postgresCalls = 0;
    try {
      for (const entry of cases) for (let index = 0; index < warmUp; index++) await entry.round();
      for (let done = 0; done < rounds; done += 5) {
        for (const entry of cases) {
          collectGarbage();
          for (let index = done; index < Math.min(rounds, done + 5); index++) {
            const before = model.calls;
            traffic.counting = entry.postgres === true;
            const elapsed = startClock();
            await entry.round();
            entry.perCall.push((elapsed().wallMs * 1000) / (model.calls - before));
            traffic.counting = false;
            if (entry.postgres) postgresCalls += model.calls - before;
          }
        }
      }
    } finally {
      for (const cadre of runtimes) await cadre.close();
      for (const [, store] of stores) await store.close();
      folder.remove();
    }
    const [stream, generate] = [median(cases[0].perCall), median(cases[1].perCall)];
    const table = markdownTable(
      ['case (N=20, 5 tool calls each)', 'µs per model call (median)', 'p90', '× bare generateText', '× bare streamText'],
      cases.map((entry) => [
        entry.name,
        fixed(median(entry.perCall)),
        fixed(quantile(entry.perCall, 0.9)),
        fixed(median(entry.perCall) / generate, 2),
        fixed(median(entry.perCall) / stream, 2),
      ]),
    );
    const perCall = (count: number) => fixed(count / postgresCalls, 2);
    return `${table}\n\nPostgres per model call: ${perCall(traffic.statements)} SQL statements, ${perCall(traffic.writes)} writes to the server (round trips at most).`;
  });
}

/**
 * Latency of signals published in a second process and heard here, `count` of each kind. The
 * publisher puts its send time (wall clock, same machine) in the signal.
 */
async function signalLatency(count: number): Promise<string> {
  return withSchema(async (url) => {
    const store = await openPostgresStore({ connectionString: url });
    const coordination = await createPostgresCoordination({ connectionString: url, store });
    const child = spawn(process.execPath, [import.meta.filename, '--publisher', url], { stdio: ['pipe', 'inherit', 'inherit'] });
    const rows: string[][] = [];
    const clock = () => performance.timeOrigin + performance.now();
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      for (const type of ['stop-requested', 'notification-pending'] as const) {
        const latencies: number[] = [];
        for (let index = 0; index < count; index++) {
          const key = type === 'stop-requested' ? 'host:1:worker' : 'ses_bench';
          const heard = new Promise<number>((resolve) => {
            const off = coordination.subscribe(type, key, (signal) => {
              off();
              const sentAt = Number(signal.type === 'stop-requested' ? signal.reason : signal.run_id.slice(4));
              resolve(clock() - sentAt);
            });
          });
          child.stdin!.write(`${type}\n`);
          latencies.push(await heard);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        rows.push([type, fixed(median(latencies), 1), fixed(quantile(latencies, 0.99), 1), String(count)]);
      }
    } finally {
      child.stdin!.end();
      await new Promise((resolve) => child.on('close', resolve));
      await coordination.close();
      await store.close();
    }
    return markdownTable(['signal from another process (Postgres LISTEN/NOTIFY)', 'p50 ms', 'p99 ms', 'samples'], rows);
  });
}

/**
 * The same stop request on a SQLite file, for comparison: the second process writes it into the
 * store (as `cadre stop` does), and this one finds it by polling (every 500 ms by default).
 */
async function sqliteStopLatency(count: number): Promise<string> {
  const folder = temporaryFolder('cadre-bench-signal');
  const path = `${folder.path}/cadre.db`;
  const store = createSqliteStore({ path });
  const owner = 'host:1:worker';
  for (let index = 0; index < count; index++) {
    await store.insertRun(
      runFixture({ id: `run_${index}`, status: 'running', lease_owner: owner, lease_expires_at: '2999-01-01T00:00:00.000Z' }),
      eventFixture(`run_${index}`, 'run-start'),
    );
  }
  await store.flush();
  const coordination = createPollingCoordination({ store });
  const child = spawn(process.execPath, [import.meta.filename, '--sqlite-publisher', path], { stdio: ['pipe', 'inherit', 'inherit'] });
  const clock = () => performance.timeOrigin + performance.now();
  const latencies: number[] = [];
  // One listener for the whole process, as an executor keeps: a request lands at any point of the polling period.
  const waiting = new Map<string, (latency: number) => void>();
  const off = coordination.subscribe('stop-requested', owner, (signal) => {
    waiting.get(signal.run_id)?.(clock() - Number(signal.reason));
    waiting.delete(signal.run_id);
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    for (let index = 0; index < count; index++) {
      const runId = `run_${index}`;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 500));
      const heard = new Promise<number>((resolve) => waiting.set(runId, resolve));
      child.stdin!.write(`${runId}\n`);
      latencies.push(await heard);
      // Carried out: the run ends, so later polls no longer find its request.
      await store.transitionRun({ id: runId, from: ['running'], to: 'canceled_by_user', event: eventFixture(runId, 'run-end') });
    }
  } finally {
    off();
    child.stdin!.end();
    await new Promise((resolve) => child.on('close', resolve));
    await coordination.close();
    await store.close();
    folder.remove();
  }
  return markdownTable(
    ['signal from another process (SQLite file, watched)', 'p50 ms', 'p99 ms', 'samples'],
    [['stop-requested', fixed(median(latencies), 1), fixed(quantile(latencies, 0.99), 1), String(count)]],
  );
}

if (typeof values['sqlite-publisher'] === 'string') {
  // The process that requests stops on the SQLite file: one run id per line on stdin.
  const store = createSqliteStore({ path: values['sqlite-publisher'] });
  let buffer = '';
  let writing = Promise.resolve();
  process.stdin.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let index = buffer.indexOf('\n'); index >= 0; index = buffer.indexOf('\n')) {
      const runId = buffer.slice(0, index);
      buffer = buffer.slice(index + 1);
      const at = performance.timeOrigin + performance.now();
      writing = writing.then(async () => {
        await store.updateRun(runId, { stop_requested_at: new Date(at).toISOString(), stop_requested_by: 'user', stop_reason: String(at) });
        await store.flush();
      });
    }
  });
  process.stdin.on('end', async () => {
    await writing;
    await store.close();
  });
} else if (typeof values.publisher === 'string') {
  // The publishing process: one signal per line on stdin, stamped with its send time.
  const url = values.publisher;
  const store = await openPostgresStore({ connectionString: url });
  const coordination = await createPostgresCoordination({ connectionString: url, store });
  let buffer = '';
  process.stdin.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let index = buffer.indexOf('\n'); index >= 0; index = buffer.indexOf('\n')) {
      const type = buffer.slice(0, index);
      buffer = buffer.slice(index + 1);
      const at = String(performance.timeOrigin + performance.now());
      if (type === 'stop-requested') coordination.publish({ type, run_id: 'run_bench', owner: 'host:1:worker', cause: 'user', reason: at });
      else coordination.publish({ type: 'notification-pending', run_id: `run_${at}`, parent_session_id: 'ses_bench' });
    }
  });
  process.stdin.on('end', async () => {
    await coordination.close();
    await store.close();
  });
} else {
  console.log('## Scale-out\n');
  if (postgresUrl) {
    console.log(await fanOut(values.quick ? 5 : 20, values.quick ? 1 : 3));
    console.log('');
    console.log(await signalLatency(values.quick ? 20 : 200));
  } else {
    console.log('Postgres cases skipped: no Postgres (pass --postgres URL or set CADRE_TEST_POSTGRES_URL)');
  }
  console.log('');
  // The embedded default needs no server.
  console.log(await sqliteStopLatency(values.quick ? 5 : 40));
}

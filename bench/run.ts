/**
 * `npm run bench [-- --only fanout|lifecycle|coldstart|own-loop|scale|postgres|streaming|workers|telemetry|mcp|workflow|cache|harness] [-- --quick] [-- --max-active-global 64,1000]`:
 * runs cadre's benchmarks and prints Markdown tables. `--quick` uses small sizes, as a smoke
 * test that ends in seconds.
 * @module
 */
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runColdStart } from './cold-start.ts';
import { runFanOut } from './fanout.ts';
import { runLifecycle } from './lifecycle.ts';
import { runMcpCall } from './mcp-call.ts';
import { runOwnLoop } from './own-loop.ts';
import { runStreamingLoad } from './streaming-load.ts';
import { runTelemetryBench } from './telemetry.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'max-active-global': { type: 'string' },
    child: { type: 'boolean', default: false },
  },
});
const benchmarks = [
  'fanout',
  'lifecycle',
  'coldstart',
  'own-loop',
  'scale',
  'postgres',
  'streaming',
  'workers',
  'telemetry',
  'mcp',
  'workflow',
  'cache',
  'harness',
];
if (values.only !== undefined && !benchmarks.includes(values.only)) {
  console.error(`--only must be one of ${benchmarks.join(', ')}, not '${values.only}'.`);
  process.exit(2);
}
const caps = values['max-active-global']?.split(',').map(Number);
if (caps?.some((cap) => !Number.isInteger(cap) || cap < 1)) {
  console.error('--max-active-global takes positive whole numbers separated by commas, like 64,1000.');
  process.exit(2);
}
if (typeof (globalThis as { gc?: unknown }).gc !== 'function') console.warn('Run with --expose-gc (npm run bench does) so each case starts after a full GC.');

const quick = values.quick;

if (!values.child) {
  console.log(`# cadre benchmarks${quick ? ' (quick)' : ''}\n`);
  console.log(`Node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), ${process.platform}\n`);
  // Each benchmark (and each lifecycle cap) runs in a process of its own, so a peak RSS is its
  // own and not what an earlier case left behind. Inside one process, cadre and the AI SDK
  // baselines share the model and run one after the other.
  const cases: string[][] = [];
  if (values.only === undefined || values.only === 'fanout') cases.push(['--only', 'fanout']);
  if (values.only === undefined || values.only === 'lifecycle') {
    for (const cap of caps ?? (quick ? [64] : [64, 1000])) cases.push(['--only', 'lifecycle', '--max-active-global', String(cap)]);
  }
  if (values.only === undefined || values.only === 'coldstart') cases.push(['--only', 'coldstart']);
  if (values.only === undefined || values.only === 'own-loop') cases.push(['--only', 'own-loop']);
  // Postgres next to SQLite, and signals between processes: needs CADRE_TEST_POSTGRES_URL (see bench/scale-out.ts).
  if (values.only === undefined || values.only === 'scale') cases.push(['--only', 'scale']);
  // Postgres against SQLite: CPU per model call, and runs per second with a 200 ms model (see bench/postgres-ratio.ts).
  if ((values.only === undefined && process.env.CADRE_TEST_POSTGRES_URL) || values.only === 'postgres') cases.push(['--only', 'postgres']);
  // Watched runs one process holds (SQLite, and Postgres with CADRE_TEST_POSTGRES_URL): see bench/streaming-load.ts.
  if (values.only === undefined || values.only === 'streaming') cases.push(['--only', 'streaming']);
  // 1/2/4 worker processes on Postgres and Redis (CADRE_TEST_POSTGRES_URL, CADRE_TEST_REDIS_URL): see bench/worker-throughput.ts.
  if (values.only === undefined || values.only === 'workers') cases.push(['--only', 'workers']);
  if (values.only === undefined || values.only === 'telemetry') cases.push(['--only', 'telemetry']);
  if (values.only === undefined || values.only === 'mcp') cases.push(['--only', 'mcp']);
  // A workflow of 1,000 runs, 50 at once, and its replay after a SIGKILL: see bench/workflow-replay.ts.
  if (values.only === undefined || values.only === 'workflow') cases.push(['--only', 'workflow']);
  // Input tokens billed at the full rate with and without Anthropic cache breakpoints: see bench/prompt-cache.ts.
  if (values.only === undefined || values.only === 'cache') cases.push(['--only', 'cache']);
  // What cadre adds to a run of the real Claude Code (skipped without it): see bench/harness-overhead.ts.
  if (values.only === undefined || values.only === 'harness') cases.push(['--only', 'harness']);
  for (const args of cases) {
    const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--child', ...(quick ? ['--quick'] : []), ...args], {
      stdio: 'inherit',
    });
    if (child.status !== 0) process.exit(child.status ?? 1);
  }
} else if (values.only === 'fanout') {
  const sizes = quick
    ? [{ fanOut: 5, toolCalls: 2 }]
    : [
        { fanOut: 20, toolCalls: 5 },
        { fanOut: 200, toolCalls: 3 },
      ];
  console.log(await runFanOut({ sizes, rounds: quick ? 3 : 20, warmUp: quick ? 1 : 3, answerChars: 2000 }));
} else if (values.only === 'workflow') {
  const { runWorkflowReplay } = await import('./workflow-replay.ts');
  console.log(await runWorkflowReplay({ runs: quick ? 100 : 1000 }));
} else if (values.only === 'cache') {
  const { runPromptCache } = await import('./prompt-cache.ts');
  console.log(await runPromptCache({ turns: quick ? 5 : 20 }));
} else if (values.only === 'harness') {
  const { runHarnessOverhead } = await import('./harness-overhead.ts');
  console.log(await runHarnessOverhead(quick ? { rounds: 1, warmUp: 0 } : {}));
} else if (values.only === 'mcp') {
  console.log(await runMcpCall(quick ? { calls: 100, rounds: 3, warmUp: 1 } : {}));
} else if (values.only === 'own-loop') {
  console.log(await runOwnLoop(quick ? { fanOut: 5, toolCalls: 2, rounds: 3, warmUp: 1 } : {}));
} else if (values.only === 'scale') {
  await import('./scale-out.ts');
} else if (values.only === 'postgres') {
  const postgresUrl = process.env.CADRE_TEST_POSTGRES_URL;
  if (!postgresUrl) {
    console.error('--only postgres needs a Postgres server: set CADRE_TEST_POSTGRES_URL.');
    process.exit(2);
  }
  const { runPostgresRatio } = await import('./postgres-ratio.ts');
  console.log(await runPostgresRatio(quick ? { postgresUrl, cpuRounds: 3, latencyRounds: 1, latencyFanOut: 20, latencyMs: 50 } : { postgresUrl }));
} else if (values.only === 'streaming') {
  console.log(await runStreamingLoad({ postgresUrl: process.env.CADRE_TEST_POSTGRES_URL, quick }));
} else if (values.only === 'workers') {
  const { runWorkerThroughput } = await import('./worker-throughput.ts');
  console.log(
    await runWorkerThroughput({
      postgresUrl: process.env.CADRE_TEST_POSTGRES_URL,
      redisUrl: process.env.CADRE_TEST_REDIS_URL,
      ...(quick ? { runs: 100, workerCounts: [1, 2] } : {}),
    }),
  );
} else if (values.only === 'telemetry') {
  console.log(
    await runTelemetryBench(
      quick ? { fanOut: 5, toolCalls: 2, rounds: 3, warmUp: 1, coldRounds: 2 } : { fanOut: 20, toolCalls: 3, rounds: 20, warmUp: 3, coldRounds: 5 },
    ),
  );
} else if (values.only === 'coldstart') {
  console.log(await runColdStart({ rounds: quick ? 3 : 20, warmUp: quick ? 1 : 3, runs: 1000 }));
} else {
  // 64 is the default cap; 1,000 lets a fifth of all runs work at once.
  const bareCalls = quick ? (['streamText'] as const) : (['streamText', 'generateText'] as const);
  console.log(await runLifecycle({ parents: quick ? 40 : 2000, runsPerParent: 5, toolCalls: 4, maxActiveGlobal: caps ?? [64], bareCalls: [...bareCalls] }));
}

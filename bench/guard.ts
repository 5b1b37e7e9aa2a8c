/**
 * `npm run bench:guard` (`node --expose-gc bench/guard.ts`): the guard against slowing down, a
 * benchmark step of CI run by `.ci/run` after `npm test`. The fan-out at N=20 and N=200 runs (5
 * tool calls each, on a SQLite file) against the same delegation written with nested
 * `generateText`, with the same scripted model, the two taking turns round by round in this one
 * process, in CPU time per model call (`process.cpuUsage`, every thread of the process: what the
 * machine's other load does not change much, where wall time does).
 *
 * A measurement is the median CPU per call of cadre's rounds over the median of the bare rounds.
 * The guard fails (exit 1) only when three measurements in a row at one size are above the limit
 * (2.5×, a doubling, not the noise of a shared machine); a measurement at or under it ends that
 * size. About 10 to 60 seconds on a loaded 2-core machine.
 *
 * Environment:
 * - `CADRE_BENCH_GUARD_LIMIT`: the limit (default 2.5).
 * - `CADRE_BENCH_GUARD_SLOWDOWN_US`: CPU burnt on cadre's side per model call, in µs (default 0),
 *   to prove the guard fails: `CADRE_BENCH_GUARD_SLOWDOWN_US=2000 npm run bench:guard` exits 1.
 * @module
 */
import { loadavg } from 'node:os';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { createBenchModel, type BenchModel } from './bench-model.ts';
import { bareFanOutRound } from './fanout-bare.ts';
import { createCadreFanOut } from './fanout-cadre.ts';
import { collectGarbage, fixed, markdownTable, median, temporaryFolder } from './measure.ts';

/** Measurements in a row above the limit that fail the guard. */
const strikes = 3;
/** Per size: rounds of each side per measurement (taking turns), and rounds of each to warm up. */
const sizes = [
  { fanOut: 20, rounds: 12, warmUp: 8 },
  { fanOut: 200, rounds: 3, warmUp: 2 },
] as const;

const limit = positiveNumber('CADRE_BENCH_GUARD_LIMIT', 2.5);
const slowdownMicros = positiveNumber('CADRE_BENCH_GUARD_SLOWDOWN_US', 0);

function positiveNumber(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) {
    console.error(`${name} must be a number of 0 or more, not '${text}'.`);
    process.exit(2);
  }
  return value;
}

/** Burns `micros` µs of this thread's CPU. */
function burn(micros: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if (used.user + used.system >= micros) return;
  }
}

/** The model cadre's side calls: `model` itself, or `model` burning CPU first on each call. */
function slowedDown(model: BenchModel, micros: number): LanguageModelV4 {
  if (micros === 0) return model;
  return Object.assign(Object.create(model) as BenchModel, {
    doGenerate: (options: Parameters<BenchModel['doGenerate']>[0]) => (burn(micros), model.doGenerate(options)),
    doStream: (options: Parameters<BenchModel['doStream']>[0]) => (burn(micros), model.doStream(options)),
  });
}

/** CPU µs per model call of one round. */
async function cpuPerCall(model: BenchModel, round: () => Promise<unknown>): Promise<number> {
  collectGarbage();
  const calls = model.calls;
  const start = process.cpuUsage();
  await round();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (model.calls - calls);
}

interface Measurement {
  fanOut: number;
  cadre: number;
  bare: number;
  ratio: number;
}

const folder = temporaryFolder('cadre-bench-guard');
const measurements: Measurement[] = [];
const failed: number[] = [];
const started = performance.now();
try {
  for (const { fanOut, rounds, warmUp } of sizes) {
    const model = createBenchModel({ fanOut, background: false, toolCalls: 5, answerChars: 2000 });
    const cadre = createCadreFanOut({ model: slowedDown(model, slowdownMicros), folder: `${folder.path}/n${fanOut}`, fanOut });
    const bare = () => bareFanOutRound({ call: 'generateText', model, toolCalls: 5 });
    try {
      for (let index = 0; index < warmUp; index++) {
        await cadre.round();
        await bare();
      }
      let above = 0;
      while (above < strikes) {
        const cadreCpu: number[] = [];
        const bareCpu: number[] = [];
        for (let index = 0; index < rounds; index++) {
          // Every other round the bare one first, so neither always follows the other.
          if (index % 2 === 0) cadreCpu.push(await cpuPerCall(model, cadre.round));
          bareCpu.push(await cpuPerCall(model, bare));
          if (index % 2 === 1) cadreCpu.push(await cpuPerCall(model, cadre.round));
        }
        const measurement = { fanOut, cadre: median(cadreCpu), bare: median(bareCpu), ratio: median(cadreCpu) / median(bareCpu) };
        measurements.push(measurement);
        console.log(
          `N=${fanOut}: cadre ${fixed(measurement.cadre)} µs CPU per model call, nested generateText ${fixed(measurement.bare)} µs: ${fixed(measurement.ratio, 2)}×`,
        );
        if (measurement.ratio <= limit) break;
        above++;
      }
      if (above === strikes) failed.push(fanOut);
    } finally {
      await cadre.close();
    }
  }
} finally {
  folder.remove();
}

const load = loadavg()
  .map((value) => value.toFixed(2))
  .join(', ');
console.log('');
console.log(
  markdownTable(
    [
      `fan-out (SQLite file, 5 tool calls per run${slowdownMicros > 0 ? `, ${slowdownMicros} µs burnt per cadre model call` : ''})`,
      'cadre CPU µs per call',
      'nested generateText CPU µs per call',
      '× generateText',
      `at most ${limit}×`,
    ],
    measurements.map((each) => [`N=${each.fanOut}`, fixed(each.cadre), fixed(each.bare), fixed(each.ratio, 2), each.ratio <= limit ? 'yes' : 'no']),
  ),
);
console.log(`\nload average ${load}; ${fixed((performance.now() - started) / 1000, 1)} s`);
if (failed.length > 0) {
  console.error(
    `bench:guard failed: at N=${failed.join(' and N=')} cadre took more than ${limit}× the CPU of nested generateText per model call, ${strikes} measurements in a row.`,
  );
  process.exit(1);
}
console.log(`bench:guard passed: cadre at most ${limit}× nested generateText's CPU per model call at N=${sizes.map((size) => size.fanOut).join(' and N=')}.`);

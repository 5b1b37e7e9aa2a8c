/**
 * `npm run bench [-- --only fanout|lifecycle] [-- --quick] [-- --max-active-global 64,1000]`:
 * runs cadre's benchmarks and prints Markdown tables. `--quick` uses small sizes, as a smoke
 * test that ends in seconds.
 * @module
 */
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { runFanOut } from './fanout.ts';
import { runLifecycle } from './lifecycle.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'max-active-global': { type: 'string' },
  },
});
const benchmarks = ['fanout', 'lifecycle'];
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
const selected = (name: string) => values.only === undefined || values.only === name;

console.log(`# cadre benchmarks${quick ? ' (quick)' : ''}\n`);
console.log(`Node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), ${process.platform}\n`);

if (selected('fanout')) {
  const sizes = quick ? [{ fanOut: 5, toolCalls: 2 }] : [{ fanOut: 20, toolCalls: 5 }, { fanOut: 200, toolCalls: 3 }];
  console.log(await runFanOut({ sizes, rounds: quick ? 3 : 20, warmUp: quick ? 1 : 3, answerChars: 2000 }));
}
if (selected('lifecycle')) {
  // 64 is the default cap; 1,000 lets a fifth of all runs work at once.
  const maxActiveGlobal = caps ?? (quick ? [64] : [64, 1000]);
  const bareCalls = quick ? (['streamText'] as const) : (['streamText', 'generateText'] as const);
  console.log(await runLifecycle({ parents: quick ? 40 : 2000, runsPerParent: 5, toolCalls: 4, maxActiveGlobal, bareCalls: [...bareCalls] }));
}

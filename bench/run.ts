/**
 * `npm run bench [-- --only fanout|lifecycle] [-- --quick]`: runs cadre's benchmarks and prints
 * Markdown tables. `--quick` uses small sizes, as a smoke test that ends in seconds.
 * @module
 */
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { runFanOut } from './fanout.ts';
import { runLifecycle } from './lifecycle.ts';

const { values } = parseArgs({ options: { only: { type: 'string' }, quick: { type: 'boolean', default: false } } });
const benchmarks = ['fanout', 'lifecycle'];
if (values.only !== undefined && !benchmarks.includes(values.only)) {
  console.error(`--only must be one of ${benchmarks.join(', ')}, not '${values.only}'.`);
  process.exit(2);
}
if (typeof (globalThis as { gc?: unknown }).gc !== 'function') console.warn('Run with --expose-gc (npm run bench does) so each case starts after a full GC.');

const quick = values.quick;
const selected = (name: string) => values.only === undefined || values.only === name;

console.log(`# cadre benchmarks${quick ? ' (quick)' : ''}\n`);
console.log(`Node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), ${process.platform}\n`);

if (selected('fanout')) {
  console.log(
    await runFanOut(
      quick
        ? { sizes: [{ fanOut: 5, toolCalls: 2 }], rounds: 3, warmUp: 1, answerChars: 2000 }
        : { sizes: [{ fanOut: 20, toolCalls: 5 }, { fanOut: 200, toolCalls: 3 }], rounds: 20, warmUp: 3, answerChars: 2000 },
    ),
  );
}
if (selected('lifecycle')) {
  console.log(
    await runLifecycle(
      quick
        ? { parents: 40, runsPerParent: 5, toolCalls: 4, maxActiveGlobal: 1000 }
        : { parents: 2000, runsPerParent: 5, toolCalls: 4, maxActiveGlobal: 1000 },
    ),
  );
}

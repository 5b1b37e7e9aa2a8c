/**
 * `node --expose-gc bench/active-run-memory.ts [--runs 1000]`: memory per active run. One parent
 * on a SQLite file delegates `runs` subagents at once (all active: limits raised); each subagent's
 * model call waits 3 s, so while all of them wait, a full GC is run and the V8 heap and RSS are
 * read; the same is read before the round. (heap, RSS while waiting − before) / runs is what one
 * active run holds while its model call is out: its loop, transcript, run record and held rows.
 * @module
 */
import { parseArgs } from 'node:util';
import { createBenchModel } from './bench-model.ts';
import { createCadreFanOut } from './fanout-cadre.ts';
import { collectGarbage, fixed, markdownTable, temporaryFolder } from './measure.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '1000' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new TypeError(`--runs must be a positive whole number, not '${values.runs}'.`);
const latencyMs = 3000;
const model = createBenchModel({ fanOut: runs, background: false, toolCalls: 0, answerChars: 2000, latencyMs });
const folder = temporaryFolder('cadre-run-memory');
const cadre = createCadreFanOut({ model, folder: folder.path, fanOut: runs });
const megabyte = 1024 * 1024;
try {
  collectGarbage();
  const before = process.memoryUsage();
  const round = cadre.round();
  // The parent's call (3 s), then every subagent's one call (3 s): read in the middle of the second.
  await new Promise((resolve) => setTimeout(resolve, latencyMs * 1.5));
  collectGarbage();
  const during = process.memoryUsage();
  // The parent's call and one call per subagent: every run is active and waiting.
  if (model.calls !== runs + 1) throw new Error(`Only ${model.calls - 1} of ${runs} runs had called their model when memory was read.`);
  await round;
  const perRun = (field: 'heapUsed' | 'rss') => ((during[field] - before[field]) / runs / 1024).toFixed(1);
  console.log(
    markdownTable(
      [`${runs} active runs (SQLite file, each waiting on its model call)`, 'before, MB', 'while active, MB', 'KB per active run'],
      [
        ['V8 heap used (after a full GC)', fixed(before.heapUsed / megabyte), fixed(during.heapUsed / megabyte), perRun('heapUsed')],
        ['RSS', fixed(before.rss / megabyte), fixed(during.rss / megabyte), perRun('rss')],
      ],
    ),
  );
} finally {
  await cadre.close();
  folder.remove();
}

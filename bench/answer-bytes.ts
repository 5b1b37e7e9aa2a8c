/**
 * `node bench/answer-bytes.ts [--rounds 20] [--fan-out 20] NAME=DIR ...`: what a fan-out round
 * (as `compare-builds.ts --sqlite` runs it: N runs of 5 tool calls, answers of 2,000 characters)
 * writes to a SQLite file, for several checkouts of cadre, each on a file of its own: the bytes
 * the process handed to `write()` per round (`wchar` of `/proc/self/io`: WAL frames and
 * checkpoints), the file's growth per round once checkpointed, and the characters of the stored
 * texts (message contents, run results, run events) per run, with how many stored texts hold a
 * run's answer. A checkout is `git archive <commit> | tar -x -C DIR` with `node_modules` linked.
 * @module
 */
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { createBenchModel } from './bench-model.ts';
// The round itself comes from this checkout: it calls only a cadre's public methods, so it serves every build.
import { fanOutRound } from './bench-tools.ts';
import { fixed, markdownTable } from './measure.ts';

const { values, positionals } = parseArgs({
  options: { rounds: { type: 'string', default: '20' }, 'fan-out': { type: 'string', default: '20' } },
  allowPositionals: true,
});
const rounds = Number(values.rounds);
const fanOut = Number(values['fan-out']);
if (positionals.length === 0 || !Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(fanOut) || fanOut < 1) {
  console.log('usage: node bench/answer-bytes.ts [--rounds 20] [--fan-out 20] NAME=DIR ...');
  process.exit(2);
}
const answerChars = 2000;
const model = createBenchModel({ fanOut, background: false, toolCalls: 5, answerChars });
const limits = { maxActivePerParent: fanOut, maxQueuedPerParent: Math.max(50, fanOut), maxActiveGlobal: Math.max(64, fanOut) };

/** Bytes this process passed to write(2) and friends so far. */
function writtenBytes(): number {
  const line = readFileSync('/proc/self/io', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('wchar:'));
  return Number(line?.split(/\s+/)[1] ?? 0);
}

const rows: string[][] = [];
for (const entry of positionals) {
  const [name, folder] = entry.includes('=') ? (entry.split('=', 2) as [string, string]) : [entry, entry];
  const root = resolve(folder);
  const { createCadre } = await import(join(root, 'src/runtime/create-cadre.ts'));
  const { createErrorSink, noopTool, workerAgent } = await import(join(root, 'bench/bench-tools.ts'));
  const { createSqliteStore } = await import(join(root, 'src/store/sqlite/sqlite-store.ts'));
  const path = join(mkdtempSync(join(tmpdir(), 'cadre-answer-bytes-')), 'cadre.db');
  const store = createSqliteStore({ path, backgroundCheckpoints: false });
  const errors = createErrorSink();
  const cadre = createCadre({ store, model, agents: [workerAgent], tools: { noop: noopTool }, limits, onError: errors.report });
  const round = () => fanOutRound(cadre, errors, name);
  await round();
  const before = writtenBytes();
  for (let index = 0; index < rounds; index++) await round();
  const written = (writtenBytes() - before) / rounds;
  await cadre.close();
  await store.close();
  const database = new DatabaseSync(path, { readOnly: true });
  const sum = (sql: string) => Number((database.prepare(sql).get() as { total: number | null }).total ?? 0);
  const runs = sum('SELECT COUNT(*) AS total FROM runs');
  const messages = sum('SELECT SUM(length(content)) AS total FROM messages');
  const results = sum('SELECT SUM(length(result)) AS total FROM runs');
  const events = sum('SELECT SUM(length(data)) AS total FROM run_events');
  const probe = 'The task is done and checked. The task is done and checked.';
  const holding = sum(
    `SELECT (SELECT COUNT(*) FROM messages WHERE instr(content, '${probe}') > 0) + (SELECT COUNT(*) FROM runs WHERE instr(result, '${probe}') > 0) AS total`,
  );
  database.close();
  const fileBytes = statSync(path).size;
  rows.push([
    name,
    fixed(written / 1024, 1),
    fixed(fileBytes / (rounds + 1) / 1024, 1),
    fixed((messages + results + events) / runs),
    fixed(messages / runs),
    fixed(results / runs),
    fixed(holding / runs, 2),
  ]);
}
console.log(
  markdownTable(
    [
      `build (SQLite, N=${fanOut}, ${rounds} rounds)`,
      'KB written per round',
      'file KB per round',
      'stored chars per run',
      'in messages',
      'in results',
      'texts holding an answer, per run',
    ],
    rows,
  ),
);

/**
 * `npm run bench -- --only workflow` (`node bench/workflow-replay.ts [--runs 1000] [--quick]`):
 * a workflow of 1,000 runs (`w.parallel` of `w.agent` calls, a workflow file as `cadre workflow
 * run` takes), each run one model call that takes 1 s (the scripted model's `delay_ms`), with the
 * caps raised to 50 at once (`maxActivePerParent` and `maxActiveGlobal` 50), on a SQLite file.
 * `--quick` uses 100 runs.
 *
 * 1. Wall time against the ideal (runs / 50 × a run's own time, the median of its `started_at` to
 *    `ended_at`), and the peak RSS and heap of the process that runs it (a child of its own, so the
 *    peak is the workflow's; `process.memoryUsage()` sampled every 10 ms).
 * 2. The cost of a replay after a crash at the 900th run: a second child runs the same workflow;
 *    this process watches the store and SIGKILLs the child once 90 % of the runs have completed.
 *    Then this process opens the store, `createCadre` (which recovers the dead process's runs) and
 *    `cadre.resumeWorkflow(id)`, and times from there to the first new run's `started_at`, and to
 *    the workflow's end. It checks that no completed run ran again (every call has one completed
 *    run; the runs started after the crash are exactly those not completed before it).
 * @module
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createCadre } from '../src/runtime/create-cadre.ts';
import type { WorkflowOutcome } from '../src/workflows/workflow-api.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel } from '../src/testing/scripted-language-model.ts';
import { fixed, markdownTable, median, probeMemory, startClock, temporaryFolder } from './measure.ts';

/** Runs at once: the caps, raised. */
const atOnce = 50;
const latencyMs = 1000;

/** The workflow, as a file `cadre workflow run` takes: every run at once, the engine holds back what the caps do not allow. */
const workflowFile = `export default async (w, input) => {
  w.phase('review');
  const results = await w.parallel(Array.from({ length: input.runs }, (_, index) => () => w.agent('general', \`Review part \${index}.\`, { description: \`part \${index}\` })));
  return results.length;
};
`;

function openCadre(db: string) {
  const store = createSqliteStore({ path: db });
  const cadre = createCadre({
    store,
    model: scriptedLanguageModel([{ turns: [{ text: 'Reviewed; all is well.', delay_ms: latencyMs }] }]),
    limits: { maxActivePerParent: atOnce, maxActiveGlobal: atOnce },
    onError: (error) => console.error(error),
  });
  return { store, cadre };
}

/** The child: runs the workflow, says its id, then (if it lives) its wall time and memory. */
async function child(db: string, file: string, runs: number): Promise<void> {
  const { cadre } = openCadre(db);
  const memory = probeMemory();
  const elapsed = startClock();
  const started = await cadre.startWorkflow(file, { runs });
  console.log(JSON.stringify({ id: started.id }));
  const outcome = await started.done;
  const { wallMs, cpuMs } = elapsed();
  const peaks = memory.stop();
  console.log(JSON.stringify({ status: outcome.status, output: outcome.output, wallMs, cpuMs, ...peaks }));
  await cadre.close();
}

interface ChildLine {
  id?: string;
  status?: string;
  output?: unknown;
  wallMs?: number;
  cpuMs?: number;
  startRss?: number;
  rss?: number;
  heap?: number;
}

function startChild(db: string, file: string, runs: number) {
  const process_ = spawn(process.execPath, [...process.execArgv, import.meta.filename, '--child', '--db', db, '--file', file, '--runs', String(runs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: ChildLine[] = [];
  const waiting: Array<() => void> = [];
  createInterface({ input: process_.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    lines.push(JSON.parse(line) as ChildLine);
    for (const wake of waiting.splice(0)) wake();
  });
  const exited = new Promise<number | null>((resolve) => process_.on('exit', (code) => resolve(code)));
  const line = async (index: number): Promise<ChildLine> => {
    while (lines.length <= index) {
      const woken = new Promise<void>((resolve) => waiting.push(resolve));
      const code = await Promise.race([woken.then(() => undefined), exited]);
      if (code !== undefined && lines.length <= index) throw new Error(`The workflow process exited (${code}) before line ${index + 1}.`);
    }
    return lines[index];
  };
  return { process: process_, line, exited };
}

/** Runs of the workflow as the store has them: ms since the epoch. */
function runsOf(db: string, workflowId: string) {
  const sqlite = new DatabaseSync(db, { readOnly: true });
  try {
    const rows = sqlite
      .prepare("SELECT status, created_at, started_at, ended_at, json_extract(workflow, '$.key') AS key FROM runs WHERE json_extract(workflow, '$.id') = ?")
      .all(workflowId) as Array<{
      status: string;
      created_at: string;
      started_at: string | null;
      ended_at: string | null;
      key: string | null;
    }>;
    return rows.map((row) => ({
      status: row.status,
      created: Date.parse(row.created_at),
      started: row.started_at ? Date.parse(row.started_at) : Number.NaN,
      ended: row.ended_at ? Date.parse(row.ended_at) : Number.NaN,
      key: row.key,
    }));
  } finally {
    sqlite.close();
  }
}

/** When each run the dead process left running was taken over (its `recovered` warning), ms since the epoch. */
function recoveredAt(db: string, workflowId: string): number[] {
  const sqlite = new DatabaseSync(db, { readOnly: true });
  try {
    const rows = sqlite
      .prepare(
        "SELECT e.at FROM run_events e JOIN runs r ON r.id = e.run_id WHERE json_extract(r.workflow, '$.id') = ? AND e.type = 'warning' AND json_extract(e.data, '$.kind') = 'recovered'",
      )
      .all(workflowId) as Array<{ at: string }>;
    return rows.map((row) => Date.parse(row.at));
  } finally {
    sqlite.close();
  }
}

function completedCount(sqlite: DatabaseSync, workflowId: string): number {
  return (sqlite.prepare("SELECT count(*) AS n FROM runs WHERE json_extract(workflow, '$.id') = ? AND status = 'completed'").get(workflowId) as { n: number })
    .n;
}

/** The figures as Markdown. */
export async function runWorkflowReplay({ runs = 1000, crashAt = Math.round(runs * 0.9) }: { runs?: number; crashAt?: number } = {}): Promise<string> {
  const folder = temporaryFolder('cadre-bench-workflow-');
  try {
    const file = join(folder.path, 'review.mjs');
    writeFileSync(file, workflowFile);

    // 1. The whole workflow, in a process of its own.
    const fullDb = join(folder.path, 'full.db');
    const full = startChild(fullDb, file, runs);
    const { id: fullId } = await full.line(0);
    const end = await full.line(1);
    await full.exited;
    if (end.status !== 'completed' || end.output !== runs) throw new Error(`The workflow ended ${end.status} with ${JSON.stringify(end.output)}.`);
    const fullRuns = runsOf(fullDb, fullId!);
    if (fullRuns.length !== runs || fullRuns.some((run) => run.status !== 'completed')) throw new Error(`${fullRuns.length} runs, not ${runs} completed.`);
    const ownMs = median(fullRuns.map((run) => run.ended - run.started));
    const ideal = (runs / atOnce) * ownMs;

    // 2. The same workflow, killed once `crashAt` runs have completed, then resumed here.
    const crashDb = join(folder.path, 'crash.db');
    const crashing = startChild(crashDb, file, runs);
    const { id } = await crashing.line(0);
    const watch = new DatabaseSync(crashDb, { readOnly: true });
    let completedAtKill = 0;
    try {
      for (;;) {
        completedAtKill = completedCount(watch, id!);
        if (completedAtKill >= crashAt) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      crashing.process.kill('SIGKILL');
      await crashing.exited;
      completedAtKill = completedCount(watch, id!);
    } finally {
      watch.close();
    }
    const beforeResume = Date.now();
    const resumeClock = startClock();
    const { store, cadre } = openCadre(crashDb);
    let resumedMs: number;
    let outcome: WorkflowOutcome;
    try {
      const resumed = await cadre.resumeWorkflow(id!);
      resumedMs = resumeClock().wallMs;
      outcome = await resumed.done;
      await store.flush();
    } finally {
      await cadre.close();
    }
    const endMs = resumeClock().wallMs;
    if (outcome.status !== 'completed' || outcome.output !== runs)
      throw new Error(`The resumed workflow ended ${outcome.status} with ${JSON.stringify(outcome.output)}.`);
    const after = runsOf(crashDb, id!);
    const newRuns = after.filter((run) => run.created >= beforeResume - 1);
    const adopted = recoveredAt(crashDb, id!);
    const completedKeys = new Set(after.filter((run) => run.status === 'completed').map((run) => run.key));
    const completedRows = after.filter((run) => run.status === 'completed').length;
    if (completedKeys.size !== runs || completedRows !== runs || after.length !== runs) {
      throw new Error(`${after.length} runs, ${completedRows} completed over ${completedKeys.size} calls, not ${runs}: a call ran twice or not at all.`);
    }
    if (newRuns.length + adopted.length !== runs - completedAtKill) {
      throw new Error(`${newRuns.length} new and ${adopted.length} recovered runs after the crash, not the ${runs - completedAtKill} left.`);
    }
    const firstOf = (times: number[]) => (times.length === 0 ? '–' : fixed(Math.min(...times) - beforeResume));
    const firstEnd = Math.min(...after.filter((run) => run.ended >= beforeResume).map((run) => run.ended)) - beforeResume;

    const table = markdownTable(
      ['runs', 'wall s', 'ideal s (runs / 50 × run)', 'wall / ideal', 'run own ms (median)', 'CPU s', 'peak RSS MB', 'start RSS MB', 'peak heap MB'],
      [
        [
          runs,
          fixed(end.wallMs! / 1000, 1),
          fixed(ideal / 1000, 1),
          fixed(end.wallMs! / ideal, 2),
          fixed(ownMs),
          fixed(end.cpuMs! / 1000, 1),
          fixed(end.rss!),
          fixed(end.startRss!),
          fixed(end.heap!),
        ],
      ],
    );
    const replay = markdownTable(
      [
        'killed after',
        'runs left: recovered, new',
        'first run taken over ms',
        'resumeWorkflow returned ms',
        'first new run started ms',
        'first run ended ms',
        'resume to end s',
        'completed runs, calls',
      ],
      [
        [
          `${completedAtKill} completed`,
          `${adopted.length}, ${newRuns.length}`,
          firstOf(adopted),
          fixed(resumedMs),
          firstOf(newRuns.map((run) => run.started)),
          fixed(firstEnd),
          fixed(endMs / 1000, 1),
          `${completedRows}, ${completedKeys.size}`,
        ],
      ],
    );
    return `## Workflow of ${runs} runs, 50 at once, 1 s model latency\n\n${table}\n\nReplay after a SIGKILL (times in ms from just before \`createCadre\` on the same file, so they include opening the store and recovering the dead process's runs; a run the dead process left running is taken over by \`createCadre\` and goes on from its transcript, its model call made again; a call it never started gets a new run once the replay reaches it):\n\n${replay}`;
  } finally {
    folder.remove();
  }
}

const { values } = parseArgs({
  options: {
    child: { type: 'boolean', default: false },
    db: { type: 'string' },
    file: { type: 'string' },
    runs: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
  strict: false,
});
if (import.meta.main && values.child) {
  await child(values.db as string, values.file as string, Number(values.runs));
} else if (import.meta.main) {
  const runs = values.runs !== undefined ? Number(values.runs) : values.quick ? 100 : 1000;
  if (!Number.isInteger(runs) || runs < 10) {
    console.error('--runs takes a whole number of at least 10.');
    process.exit(2);
  }
  console.log(await runWorkflowReplay({ runs }));
}

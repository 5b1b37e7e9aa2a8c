import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { eventFixture, runFixture, sessionFixture } from '../src/store/store-fixtures.ts';
import { installPacked } from '../test/helpers/install-packed.ts';
import { fixed, markdownTable, median, quantile, temporaryFolder } from './measure.ts';

/** Sizes of the cold-start benchmark. */
export interface ColdStartOptions {
  /** Measured runs of each command, taken in turns. */
  rounds: number;
  /** Unmeasured runs of each command first (they fill Node's compile cache). */
  warmUp: number;
  /** Runs in the database that `cadre runs` reads, 10 to a session. */
  runs: number;
}

/** A database of `runs` finished runs, written through the store API as cadre writes them. */
async function buildDatabase(path: string, runs: number): Promise<void> {
  const store = createSqliteStore({ path });
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const at = (offsetMs: number) => new Date(start + offsetMs).toISOString();
  for (let index = 0; index < runs; index += 1) {
    const sessionId = `ses_${String(Math.floor(index / 10)).padStart(6, '0')}`;
    if (index % 10 === 0) await store.createSession(sessionFixture({ id: sessionId, created_at: at(index * 1000) }));
    const id = `run_${String(index).padStart(6, '0')}`;
    const run = runFixture({
      id,
      parent_session_id: sessionId,
      tool_call_id: `call_${index}`,
      description: `survey part ${index}`,
      task: `Survey part ${index} of the repository and report what it holds.`,
      status: 'completed',
      turns: 3,
      created_at: at(index * 1000),
      started_at: at(index * 1000 + 10),
      ended_at: at(index * 1000 + 900),
      last_activity: 'Wrote the report.',
      result: { text: 'Part holds three modules and their tests. '.repeat(20), truncated: false, original_length: 840 },
      usage: { input_tokens: 1200, output_tokens: 300 },
    });
    await store.insertRun(run, eventFixture(id, 'run-start', {}, at(index * 1000)));
  }
  await store.close();
}

/**
 * Times the installed `cadre` as whole processes, as a person starting it pays: packs this
 * checkout, installs the tarball into a fresh project, then runs `node -e 0`, `cadre --version`
 * and `cadre runs` (on a database of `runs` runs) in turns, each `rounds` times after `warmUp`
 * unmeasured runs, on the Node running the benchmark. Also with Node's compile cache off
 * (`NODE_DISABLE_COMPILE_CACHE=1`), to show what the bin's `module.enableCompileCache()` saves.
 */
export async function runColdStart(options: ColdStartOptions): Promise<string> {
  const folder = temporaryFolder('cadre-cold-start');
  try {
    const installed = await installPacked(folder.path);
    const database = join(folder.path, 'runs.db');
    await buildDatabase(database, options.runs);
    const env = { PATH: installed.path, HOME: folder.path, LANG: 'C.UTF-8', NO_COLOR: '1', NODE_COMPILE_CACHE: join(folder.path, 'compile-cache') };
    const noCache = { ...env, NODE_DISABLE_COMPILE_CACHE: '1' };
    const commands = [
      { name: '`node -e 0`', args: ['-e', '0'], env, target: undefined },
      { name: '`cadre --version`', args: [installed.bin, '--version'], env, target: 2 },
      { name: `\`cadre runs\` (${options.runs.toLocaleString('en')} runs)`, args: [installed.bin, 'runs', '--db', database], env, target: 4 },
      { name: '`cadre --version`, no compile cache', args: [installed.bin, '--version'], env: noCache, target: undefined },
      { name: '`cadre runs`, no compile cache', args: [installed.bin, 'runs', '--db', database], env: noCache, target: undefined },
    ];
    // GNU time, where installed, also gives each process's CPU time (user + system, in 10 ms
    // steps), which a busy machine disturbs far less than wall time.
    const gnuTime = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
    const times = commands.map(() => [] as number[]);
    const cpuTimes = commands.map(() => [] as number[]);
    for (let round = 0; round < options.warmUp + options.rounds; round += 1) {
      commands.forEach((command, index) => {
        const [file, args] = gnuTime ? [gnuTime, ['-f', 'cpu %U %S', process.execPath, ...command.args]] : [process.execPath, command.args];
        const started = performance.now();
        const child = spawnSync(file, args, { cwd: installed.project, env: command.env, encoding: 'utf8' });
        const elapsed = performance.now() - started;
        const cpu = /^cpu ([\d.]+) ([\d.]+)\n?$/m.exec(child.stderr);
        const stderr = child.stderr.replace(/^cpu [\d.]+ [\d.]+\n?$/m, '');
        if (child.status !== 0 || stderr !== '') throw new Error(`${command.name} failed (${child.status}): ${stderr}`);
        if (round < options.warmUp) return;
        times[index].push(elapsed);
        if (cpu) cpuTimes[index].push((Number(cpu[1]) + Number(cpu[2])) * 1000);
      });
    }
    const bare = median(times[0]);
    const bareMin = Math.min(...times[0]);
    const rows = commands.map((command, index) => {
      const ratio = median(times[index]) / bare;
      return [
        command.name,
        fixed(median(times[index])),
        fixed(Math.min(...times[index])),
        fixed(quantile(times[index], 0.9)),
        `${fixed(ratio, 2)}×`,
        `${fixed(Math.min(...times[index]) / bareMin, 2)}×`,
        gnuTime ? fixed(median(cpuTimes[index])) : 'n/a',
        command.target === undefined ? '' : `≤ ${command.target}×`,
        command.target === undefined ? '' : ratio <= command.target ? 'yes' : 'no',
      ];
    });
    return [
      `## Cold start (${options.rounds} runs of each command, median, after ${options.warmUp} warm-up runs)\n`,
      markdownTable(
        ['command', 'median ms', 'min ms', 'p90 ms', '× bare node (median)', '× bare node (min)', 'CPU ms (median)', 'target (median)', 'met'],
        rows,
      ),
      '',
    ].join('\n');
  } finally {
    folder.remove();
  }
}

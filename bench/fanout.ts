import { createBenchModel, type BenchModel } from './bench-model.ts';
import { bareFanOutRound, type BareCall } from './fanout-bare.ts';
import { createCadreFanOut, type StoredRows } from './fanout-cadre.ts';
import { createSqlReplay, type SqlReplay } from './fanout-sql.ts';
import { timeStatements, type StatementTimes } from './time-statements.ts';
import { collectGarbage, fixed, markdownTable, median, quantile, startClock, temporaryFolder, type MemoryPeaks } from './measure.ts';

/** Sizes and repetitions of the fan-out benchmark. */
export interface FanOutOptions {
  sizes: Array<{ fanOut: number; toolCalls: number }>;
  rounds: number;
  warmUp: number;
  /** Characters of each worker's final answer. */
  answerChars: number;
}

interface CaseResult {
  name: string;
  fanOut: number;
  toolCalls: number;
  callsPerRound: number;
  /** Wall µs per model call, one per measured round. */
  perCall: number[];
  /** CPU µs per model call, one per measured round: less sensitive to other load on the machine. */
  cpuPerCall: number[];
  memory: MemoryPeaks;
}

/** A case of one size: its round and what was measured of it. */
interface FanOutCase extends CaseResult {
  round: () => unknown;
  /** The model calls a round counts for, when it makes none itself (the SQL replay). */
  modelCalls?: () => number;
}

/** Measured rounds a case runs in a row before the next case takes its turn. */
const blockRounds = 5;

/**
 * Runs the cases taking turns, in blocks of `blockRounds` measured rounds (after `warmUp` rounds of
 * each at first), so that the machine's drift (its CPU speed varies on a shared VM) reaches every
 * case alike and the ratios between them hold. Each block starts with a full GC and one round that
 * is not measured, so a case does not pay for the garbage of the one before it. Samples memory
 * while each case runs: RSS is a high-water mark of the process, so a case's `startRss` (before
 * its first round, after a full GC) says what the cases before it left.
 */
async function measureInTurns(cases: FanOutCase[], model: BenchModel, options: FanOutOptions): Promise<void> {
  const megabyte = 1024 * 1024;
  let current: FanOutCase | undefined;
  const sample = () => {
    if (!current) return;
    const usage = process.memoryUsage();
    current.memory.rss = Math.max(current.memory.rss, usage.rss / megabyte);
    current.memory.heap = Math.max(current.memory.heap, usage.heapUsed / megabyte);
  };
  const sampler = setInterval(sample, 10);
  const round = async (entry: FanOutCase, measured: boolean) => {
    current = entry;
    const callsBefore = model.calls;
    const elapsed = startClock();
    await entry.round();
    const { wallMs, cpuMs } = elapsed();
    sample();
    current = undefined;
    entry.callsPerRound = entry.modelCalls?.() ?? model.calls - callsBefore;
    if (!measured) return;
    entry.perCall.push((wallMs * 1000) / entry.callsPerRound);
    entry.cpuPerCall.push((cpuMs * 1000) / entry.callsPerRound);
  };
  try {
    for (const entry of cases) {
      collectGarbage();
      entry.memory.startRss = entry.memory.rss = process.memoryUsage.rss() / megabyte;
      for (let index = 0; index < options.warmUp; index++) await round(entry, false);
    }
    for (let done = 0; done < options.rounds; done += blockRounds) {
      for (const entry of cases) {
        collectGarbage();
        await round(entry, false);
        for (let index = done; index < Math.min(options.rounds, done + blockRounds); index++) await round(entry, true);
      }
    }
  } finally {
    clearInterval(sampler);
  }
}

/**
 * Fan-out: the parent's first model call makes `fanOut` parallel `agent` calls, each subagent
 * calls `noop` `toolCalls` times then answers, and the parent answers. Baselines (AI SDK alone,
 * no persistence), cadre without storage, cadre on a SQLite file, and the SQL of cadre's rows
 * alone run against the same model in this process, taking turns in blocks of rounds. Returns
 * the Markdown report.
 */
export async function runFanOut(options: FanOutOptions): Promise<string> {
  const results: CaseResult[] = [];
  const stored: StoredRound[] = [];
  for (const size of options.sizes) {
    const model = createBenchModel({ fanOut: size.fanOut, background: false, toolCalls: size.toolCalls, answerChars: options.answerChars });
    const folder = temporaryFolder('cadre-bench-fanout');
    // What cadre costs with no storage at all: the part of its overhead that is not the store's.
    const unstored = createCadreFanOut({ model, folder: '', fanOut: size.fanOut, storage: 'memory' });
    const cadre = createCadreFanOut({ model, folder: folder.path, fanOut: size.fanOut });
    let lastSession = '';
    let replay: SqlReplay | undefined;
    const entry = (name: string, round: () => unknown, modelCalls?: () => number): FanOutCase => ({
      name,
      ...size,
      round,
      modelCalls,
      callsPerRound: 0,
      perCall: [],
      cpuPerCall: [],
      memory: { startRss: 0, rss: 0, heap: 0 },
    });
    const cases: FanOutCase[] = [
      ...(['streamText', 'generateText', 'generateText, telemetry off'] satisfies BareCall[]).map((call) =>
        entry(`bare ${call}`, () => bareFanOutRound({ call, model, toolCalls: size.toolCalls })),
      ),
      entry('cadre, nothing stored (floor)', () => unstored.round()),
      entry('cadre (SQLite file)', async () => (lastSession = await cadre.round())),
      // The rows of cadre's first round written again by plain statements, per model call of cadre's round.
      entry(
        "SQL alone (the round's rows, replayed)",
        () => (replay ??= createSqlReplay({ sourcePath: cadre.path, sessionId: lastSession, folder: folder.path, transactions: 5 })).round(),
        () => cases[4].callsPerRound,
      ),
    ];
    try {
      await measureInTurns(cases, model, options);
      replay?.check();
      results.push(
        ...cases.map(({ name, fanOut, toolCalls, callsPerRound, perCall, cpuPerCall, memory }) => ({
          name,
          fanOut,
          toolCalls,
          callsPerRound,
          perCall,
          cpuPerCall,
          memory,
        })),
      );
      const limits = Object.entries(cadre.limits)
        .map(([key, value]) => `${key}=${value}`)
        .join(', ');
      // After the measured rounds, so the timing's own cost touches none of them.
      const callsBefore = model.calls;
      const sql = await timeStatements(async () => {
        for (let round = 0; round < statementRounds; round++) await cadre.round();
      });
      stored.push({ ...size, rows: await cadre.storedRows(lastSession), limits, sql, sqlCalls: model.calls - callsBefore });
    } finally {
      replay?.close();
      await unstored.close();
      await cadre.close();
      folder.remove();
    }
  }
  return report(results, stored);
}

interface StoredRound {
  fanOut: number;
  toolCalls: number;
  rows: StoredRows;
  limits: string;
  /** The statements of cadre's SQLite store over {@link statementRounds} more rounds, and their model calls. */
  sql: StatementTimes;
  sqlCalls: number;
}

/** Rounds of cadre on SQLite whose statements are timed one by one, after the measured ones. */
const statementRounds = 5;

function report(results: CaseResult[], stored: StoredRound[]): string {
  const rows = results.map((result) => {
    const baselineOf = (name: string) => results.find((other) => other.name === name && other.fanOut === result.fanOut && other.toolCalls === result.toolCalls);
    const ratio = (name: string, pick: (other: CaseResult) => number[]) => {
      const baseline = baselineOf(name);
      return baseline ? `${fixed(median(pick(result)) / median(pick(baseline)), 2)}×` : 'n/a';
    };
    return [
      result.name,
      `N=${result.fanOut}, T=${result.toolCalls}`,
      result.callsPerRound,
      `${fixed(median(result.perCall))} (${fixed(quantile(result.perCall, 0.1))}–${fixed(quantile(result.perCall, 0.9))})`,
      fixed(median(result.cpuPerCall)),
      `${fixed(result.memory.rss)} (start ${fixed(result.memory.startRss)})`,
      fixed(result.memory.heap),
      ratio('bare generateText', (other) => other.perCall),
      ratio('bare generateText, telemetry off', (other) => other.perCall),
      ratio('bare generateText', (other) => other.cpuPerCall),
      ratio('bare streamText', (other) => other.perCall),
    ];
  });
  const table = markdownTable(
    [
      'implementation',
      'size',
      'model calls/round',
      'wall µs/call median (p10–p90)',
      'CPU µs/call',
      'peak RSS MB',
      'peak heap MB',
      'wall vs bare generateText',
      'wall vs bare generateText, telemetry off',
      'CPU vs bare generateText',
      'wall vs bare streamText',
    ],
    rows,
  );
  const storedTable = markdownTable(
    ['size', 'runs', 'messages (expected)', 'run events', 'cadre limits'],
    // The parent: user, assistant with the calls, tool results, answer; each child: user, (assistant, tool) × T, answer.
    stored.map(({ fanOut, toolCalls, rows, limits }) => {
      const expected = 4 + fanOut * (2 * toolCalls + 2);
      return [`N=${fanOut}, T=${toolCalls}`, rows.runs, `${rows.messages} (${expected})`, rows.events, limits];
    }),
  );
  const sqlTable = markdownTable(
    ['size', 'statements per model call', 'µs per model call in statements (× bare generateText)', 'of which COMMIT', "storage's share less its statements"],
    stored.map(({ fanOut, toolCalls, sql, sqlCalls }) => {
      const of = (name: string) => results.find((result) => result.name === name && result.fanOut === fanOut && result.toolCalls === toolCalls);
      const [bare, floor, sqlite] = [of('bare generateText'), of('cadre, nothing stored (floor)'), of('cadre (SQLite file)')];
      const perCall = (sql.totalMs * 1000) / sqlCalls;
      const bareUs = bare ? median(bare.perCall) : Number.NaN;
      const share = sqlite && floor ? (median(sqlite.perCall) - median(floor.perCall) - perCall) / bareUs : Number.NaN;
      return [
        `N=${fanOut}, T=${toolCalls}`,
        fixed(sql.statements / sqlCalls, 2),
        `${fixed(perCall, 1)} (${fixed(perCall / bareUs, 2)}×)`,
        fixed((sql.commitMs * 1000) / sqlCalls, 1),
        `${fixed(share, 2)}×`,
      ];
    }),
  );
  return `### Fan-out\n\n${table}\n\nAgainst issue 21's targets (wall per model call, ratios to bare \`generateText\` of the same run):\n\n${targetTable(results)}\n\nThe statements cadre's SQLite store ran on the loops' thread, timed one by one over ${statementRounds} more rounds (the last column: storage's share above without them, what a store that ran its statements on another thread could come down to):\n\n${sqlTable}\n\nRows cadre stored in one round (read back through a second connection):\n\n${storedTable}\n`;
}

/** Issue 21's targets: the SQLite file at most 1.25× bare `generateText` at N=20 and 1.35× at N=200; storage's share at most 0.1×. */
const targets: Record<number, number> = { 20: 1.25, 200: 1.35 };

/** Per size: cadre on SQLite, cadre storing nothing, and storage's share (their difference), each against its target. */
function targetTable(results: CaseResult[]): string {
  const sizes = [...new Set(results.map((result) => `${result.fanOut}/${result.toolCalls}`))];
  const rows = sizes.flatMap((size) => {
    const of = (name: string) => results.find((result) => result.name === name && `${result.fanOut}/${result.toolCalls}` === size);
    const [bare, floor, sqlite] = [of('bare generateText'), of('cadre, nothing stored (floor)'), of('cadre (SQLite file)')];
    if (!bare || !floor || !sqlite) return [];
    const ratio = (entry: CaseResult) => median(entry.perCall) / median(bare.perCall);
    const target = targets[sqlite.fanOut];
    const verdict = (value: number, limit: number | undefined) =>
      limit === undefined ? `${fixed(value, 2)}×` : `${fixed(value, 2)}× (target ≤ ${limit}×: ${value <= limit ? 'met' : 'not met'})`;
    return [
      [`N=${sqlite.fanOut}, T=${sqlite.toolCalls}`, verdict(ratio(sqlite), target), `${fixed(ratio(floor), 2)}×`, verdict(ratio(sqlite) - ratio(floor), 0.1)],
    ];
  });
  return markdownTable(['size', 'cadre (SQLite file)', 'cadre, nothing stored', "storage's share (SQLite − nothing stored)"], rows);
}

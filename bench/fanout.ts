import { createBenchModel, type BenchModel } from './bench-model.ts';
import { bareFanOutRound, type BareCall } from './fanout-bare.ts';
import { createCadreFanOut, type StoredRows } from './fanout-cadre.ts';
import { createSqlReplay } from './fanout-sql.ts';
import { fixed, markdownTable, median, probeMemory, quantile, startClock, temporaryFolder, type MemoryPeaks } from './measure.ts';

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

/**
 * Repeats `round`, timing each measured round per model call (or per `modelCalls`, for a round
 * that calls no model); samples RSS throughout.
 */
async function measureCase(name: string, model: BenchModel, size: FanOutOptions['sizes'][number], options: FanOutOptions, round: () => unknown, modelCalls?: number): Promise<CaseResult> {
  const probe = probeMemory();
  for (let index = 0; index < options.warmUp; index++) await round();
  const perCall: number[] = [];
  const cpuPerCall: number[] = [];
  let callsPerRound = 0;
  for (let index = 0; index < options.rounds; index++) {
    const callsBefore = model.calls;
    const elapsed = startClock();
    await round();
    const { wallMs, cpuMs } = elapsed();
    callsPerRound = modelCalls ?? model.calls - callsBefore;
    perCall.push((wallMs * 1000) / callsPerRound);
    cpuPerCall.push((cpuMs * 1000) / callsPerRound);
  }
  return { name, ...size, callsPerRound, perCall, cpuPerCall, memory: probe.stop() };
}

/**
 * Fan-out: the parent's first model call makes `fanOut` parallel `agent` calls, each subagent
 * calls `noop` `toolCalls` times then answers, and the parent answers. Baselines (AI SDK alone,
 * no persistence) and cadre (file-backed SQLite) run against the same model in this process.
 * Returns the Markdown report.
 */
export async function runFanOut(options: FanOutOptions): Promise<string> {
  const results: CaseResult[] = [];
  const stored: StoredRound[] = [];
  for (const size of options.sizes) {
    const model = createBenchModel({ fanOut: size.fanOut, background: false, toolCalls: size.toolCalls, answerChars: options.answerChars });
    for (const call of ['streamText', 'generateText', 'generateText, telemetry off'] satisfies BareCall[]) {
      results.push(await measureCase(`bare ${call}`, model, size, options, () => bareFanOutRound({ call, model, toolCalls: size.toolCalls })));
    }
    // What cadre costs with no storage at all: the part of its overhead that is not the store's.
    const unstored = createCadreFanOut({ model, folder: '', fanOut: size.fanOut, storage: 'memory' });
    try {
      results.push(await measureCase('cadre, nothing stored (floor)', model, size, options, () => unstored.round()));
    } finally {
      await unstored.close();
    }
    const folder = temporaryFolder('cadre-bench-fanout');
    const cadre = createCadreFanOut({ model, folder: folder.path, fanOut: size.fanOut });
    let lastSession = '';
    try {
      results.push(await measureCase('cadre (SQLite file)', model, size, options, async () => (lastSession = await cadre.round())));
      const limits = Object.entries(cadre.limits).map(([key, value]) => `${key}=${value}`).join(', ');
      stored.push({ ...size, rows: await cadre.storedRows(lastSession), limits });
      // The same rows written by plain statements, per model call of cadre's round.
      const replay = createSqlReplay({ sourcePath: cadre.path, sessionId: lastSession, folder: folder.path, transactions: 5 });
      try {
        const calls = results[results.length - 1].callsPerRound;
        results.push(await measureCase('SQL alone (the round\'s rows, replayed)', model, size, options, () => replay.round(), calls));
        replay.check();
      } finally {
        replay.close();
      }
    } finally {
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
}

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
    ['implementation', 'size', 'model calls/round', 'wall µs/call median (p10–p90)', 'CPU µs/call', 'peak RSS MB', 'peak heap MB', 'wall vs bare generateText (target ≤ 1.5×)', 'wall vs bare generateText, telemetry off', 'CPU vs bare generateText', 'wall vs bare streamText'],
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
  return `### Fan-out\n\n${table}\n\nRows cadre stored in one round (read back through a second connection):\n\n${storedTable}\n`;
}

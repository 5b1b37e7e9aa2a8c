import { createBenchModel, type BenchModel } from './bench-model.ts';
import { bareFanOutRound, type BareCall } from './fanout-bare.ts';
import { createCadreFanOut, type StoredRows } from './fanout-cadre.ts';
import { fixed, markdownTable, median, probeMemory, quantile, temporaryFolder } from './measure.ts';

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
  perCall: number[];
  startMb: number;
  peakMb: number;
}

/** Repeats `round`, timing each measured round per model call; samples RSS throughout. */
async function measureCase(name: string, model: BenchModel, size: FanOutOptions['sizes'][number], options: FanOutOptions, round: () => Promise<unknown>): Promise<CaseResult> {
  const probe = probeMemory();
  for (let index = 0; index < options.warmUp; index++) await round();
  const perCall: number[] = [];
  let callsPerRound = 0;
  for (let index = 0; index < options.rounds; index++) {
    const callsBefore = model.calls;
    const started = performance.now();
    await round();
    const elapsed = performance.now() - started;
    callsPerRound = model.calls - callsBefore;
    perCall.push((elapsed * 1000) / callsPerRound);
  }
  return { name, ...size, callsPerRound, perCall, startMb: probe.startMb, peakMb: probe.stop() };
}

/**
 * Fan-out: the parent's first model call makes `fanOut` parallel `agent` calls, each subagent
 * calls `noop` `toolCalls` times then answers, and the parent answers. Baselines (AI SDK alone,
 * no persistence) and cadre (file-backed SQLite) run against the same model in this process.
 * Returns the Markdown report.
 */
export async function runFanOut(options: FanOutOptions): Promise<string> {
  const results: CaseResult[] = [];
  const stored: Array<{ size: string; rows: StoredRows; limits: string }> = [];
  for (const size of options.sizes) {
    const model = createBenchModel({ fanOut: size.fanOut, background: false, toolCalls: size.toolCalls, answerChars: options.answerChars });
    for (const call of ['streamText', 'generateText'] satisfies BareCall[]) {
      results.push(await measureCase(`bare ${call}`, model, size, options, () => bareFanOutRound({ call, model, toolCalls: size.toolCalls })));
    }
    const folder = temporaryFolder('cadre-bench-fanout');
    const cadre = createCadreFanOut({ model, folder: folder.path, fanOut: size.fanOut });
    let lastSession = '';
    try {
      results.push(await measureCase('cadre (SQLite file)', model, size, options, async () => (lastSession = await cadre.round())));
      const limits = Object.entries(cadre.limits).map(([key, value]) => `${key}=${value}`).join(', ');
      stored.push({ size: `N=${size.fanOut}, T=${size.toolCalls}`, rows: await cadre.storedRows(lastSession), limits });
    } finally {
      await cadre.close();
      folder.remove();
    }
  }
  return report(results, stored);
}

function report(results: CaseResult[], stored: Array<{ size: string; rows: StoredRows; limits: string }>): string {
  const rows = results.map((result) => {
    const baseline = results.find((other) => other.name === 'bare streamText' && other.fanOut === result.fanOut && other.toolCalls === result.toolCalls);
    const ratio = baseline ? median(result.perCall) / median(baseline.perCall) : Number.NaN;
    return [
      result.name,
      `N=${result.fanOut}, T=${result.toolCalls}`,
      result.callsPerRound,
      fixed(median(result.perCall), 1),
      `${fixed(quantile(result.perCall, 0.1), 1)}–${fixed(quantile(result.perCall, 0.9), 1)}`,
      `${fixed(result.peakMb)} (start ${fixed(result.startMb)})`,
      `${fixed(ratio, 2)}×`,
    ];
  });
  const table = markdownTable(['implementation', 'size', 'model calls/round', 'µs/model call (median)', 'p10–p90', 'peak RSS MB', 'vs bare streamText'], rows);
  const storedTable = markdownTable(
    ['size', 'runs', 'messages', 'run events', 'cadre limits'],
    stored.map((entry) => [entry.size, entry.rows.runs, entry.rows.messages, entry.rows.events, entry.limits]),
  );
  return `### Fan-out\n\n${table}\n\nRows cadre stored in one round (read back through a second connection):\n\n${storedTable}\n`;
}

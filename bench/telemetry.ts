import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { startOtlpReceiver } from '../src/telemetry/otlp-receiver.ts';
import type { TelemetryProtocol } from '../src/telemetry/telemetry-settings.ts';
import { createBenchModel } from './bench-model.ts';
import { collectGarbage, fixed, markdownTable, median, startClock } from './measure.ts';
import { createErrorSink, noopTool, workerAgent } from './bench-tools.ts';
import { createMemoryStore } from './memory-store.ts';

/** Sizes of the telemetry benchmark. */
export interface TelemetryBenchOptions {
  /** `agent` calls in the parent's first step. */
  fanOut: number;
  /** `noop` calls each worker makes. */
  toolCalls: number;
  rounds: number;
  warmUp: number;
  /** Cold starts (a process each) of each mode. */
  coldRounds: number;
}

type Mode = { label: string; protocol?: TelemetryProtocol };
const modes: Mode[] = [
  { label: 'off (no endpoint)' },
  { label: 'on, OTLP http/json', protocol: 'http/json' },
  { label: 'on, OTLP http/protobuf', protocol: 'http/protobuf' },
];

/** One mode's rounds: median wall and CPU per round, and the CPU of the last flush. */
async function measureMode(mode: Mode, options: TelemetryBenchOptions) {
  const receiver = mode.protocol ? await startOtlpReceiver() : undefined;
  const errors = createErrorSink();
  const model = createBenchModel({ fanOut: options.fanOut, background: false, toolCalls: options.toolCalls, answerChars: 500 });
  const limits = { maxActivePerParent: options.fanOut, maxQueuedPerParent: 50, maxActiveGlobal: 64 };
  const cadre = createCadre({
    store: createMemoryStore(),
    model,
    agents: [workerAgent],
    tools: { noop: noopTool },
    limits,
    onError: errors.report,
    env: receiver ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } : {},
    tracing: mode.protocol ? { protocol: mode.protocol } : undefined,
  });
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let round = 0; round < options.warmUp + options.rounds; round++) {
    collectGarbage();
    const stop = startClock();
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'Fan out the work.');
    if (turn.status !== 'completed') throw new Error(`The parent turn ended ${turn.status}: ${turn.error ?? ''}`);
    await cadre.waitForIdle(session.id);
    const { wallMs, cpuMs } = stop();
    if (round >= options.warmUp) {
      walls.push(wallMs);
      cpus.push(cpuMs);
    }
  }
  const stopClose = startClock();
  await cadre.close();
  const close = stopClose();
  errors.check(mode.label);
  const spans = receiver ? receiver.requests.length : 0;
  await receiver?.close();
  return { wall: median(walls), cpu: median(cpus), closeMs: close.wallMs, exports: spans };
}

/** A fresh process importing cadre, making a runtime and running one small turn, timed from outside. */
async function coldStart(protocol: TelemetryProtocol | undefined, endpoint: string | undefined): Promise<number> {
  const started = performance.now();
  // Not spawnSync: the receiver in this process must answer the child's exports.
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--cold'], {
    env: {
      ...process.env,
      ...(endpoint ? { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: protocol } : { OTEL_EXPORTER_OTLP_ENDPOINT: '' }),
    },
    stdio: 'inherit',
  });
  const [status] = (await once(child, 'exit')) as [number | null];
  if (status !== 0) throw new Error(`The cold-start child failed (${status})`);
  return performance.now() - started;
}

/**
 * What telemetry costs: a delegation round (a parent fanning out to `fanOut` workers, each making
 * `toolCalls` tool calls) with telemetry off and on (spans exported to a local OTLP receiver), and
 * a process's cold start (import, runtime, one turn) with telemetry off and on.
 */
export async function runTelemetryBench(options: TelemetryBenchOptions): Promise<string> {
  const rows: Array<Array<string | number>> = [];
  let baseline = 0;
  for (const mode of modes) {
    const result = await measureMode(mode, options);
    if (!mode.protocol) baseline = result.cpu;
    rows.push([
      mode.label,
      fixed(result.wall, 1),
      fixed(result.cpu, 1),
      mode.protocol ? `${fixed(((result.cpu - baseline) / baseline) * 100, 0)} %` : '–',
      fixed(result.closeMs, 1),
      result.exports,
    ]);
  }
  const receiver = await startOtlpReceiver();
  const cold: Array<Array<string | number>> = [];
  for (const mode of modes) {
    const times: number[] = [];
    for (let round = 0; round < options.coldRounds + 1; round++) times.push(await coldStart(mode.protocol, mode.protocol ? receiver.endpoint : undefined));
    cold.push([mode.label, fixed(median(times.slice(1)), 0)]);
  }
  await receiver.close();
  return [
    `## Telemetry (fan-out ${options.fanOut}, ${options.toolCalls} tool calls each; ${options.rounds} rounds)\n`,
    markdownTable(['telemetry', 'median wall ms / round', 'median CPU ms / round', 'CPU vs off', 'close (flush) ms', 'OTLP requests'], rows),
    '',
    markdownTable(['telemetry', 'cold start ms (import, runtime, one turn, close)'], cold),
    '',
  ].join('\n');
}

if (process.argv.includes('--cold')) {
  const model = createBenchModel({ fanOut: 1, background: false, toolCalls: 1, answerChars: 100 });
  const cadre = createCadre({ store: createMemoryStore(), model, agents: [workerAgent], tools: { noop: noopTool } });
  const session = await cadre.createSession();
  await cadre.send(session.id, 'Fan out the work.');
  await cadre.waitForIdle(session.id);
  await cadre.close();
}

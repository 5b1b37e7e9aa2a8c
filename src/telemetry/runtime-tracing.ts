import type { TelemetryOptions } from 'ai';
import type { ToolMiddleware } from '../loop/tool-pipeline.ts';
import type { ExecutionContext, ExecutionOutcome, RunExecutor, RunMessageFeed } from '../runs/run-executor.ts';
import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { setBounded } from '../util/bounded-map.ts';
import type { CadreTracer, TraceCarrier } from './cadre-tracer.ts';
import type { ResolvedTelemetry } from './telemetry-settings.ts';

/** Options of {@link createRuntimeTracing}. */
export interface RuntimeTracingOptions {
  settings: ResolvedTelemetry;
  store: Store;
  redact: (text: string) => string;
  /** The AI SDK telemetry settings the caller gave, kept under the integration. */
  telemetry?: TelemetryOptions;
  onError: (error: unknown) => void;
}

/**
 * One runtime's tracing: the tracer loads in the background when the runtime is made (a dynamic
 * import), and every turn and run waits for it before its first span. Telemetry that cannot start
 * (a bad endpoint URL) is reported once and the runtime runs untraced.
 */
export interface RuntimeTracing {
  /**
   * The AI SDK telemetry settings of every loop: filled in once the tracer has loaded, which every
   * traced turn and run awaits before its loop starts.
   */
  readonly loopTelemetry: TelemetryOptions;
  /** The trace context of the code running now, to store with a new run. */
  capture(): TraceCarrier | undefined;
  /** The executor, each run's loop in a run span nested where the run was started. */
  traceExecutor(executor: RunExecutor): RunExecutor;
  /** Runs a primary turn in a span (a resumed one linked to the runs that woke it). */
  traceTurn<T extends { error?: string }>(sessionId: string, resumed: boolean, work: () => Promise<T>): Promise<T>;
  /** Runs a workflow's script in a span, so the runs it starts nest under it (see {@link CadreTracer.inWorkflow}). */
  traceWorkflow<T extends { error?: string | { message: string } }>(
    workflow: { id: string; name: string; sessionId: string; replay: boolean },
    work: () => Promise<T>,
  ): Promise<T>;
  /** The tool pipeline's tracing entry for one agent's calls, once the tracer has loaded (see {@link CadreTracer.toolEntry}). */
  toolEntries(caller: { sessionId: string; runId: string | null; agent: string }): ToolMiddleware[];
  /** Sends the spans still held and stops. */
  close(): Promise<void>;
}

/** Parent sessions whose waking runs are remembered for the next resumed turn's links. */
const rememberedSessions = 10_000;

/** Creates the {@link RuntimeTracing} and starts loading the tracer. */
export function createRuntimeTracing(options: RuntimeTracingOptions): RuntimeTracing {
  const { store, onError } = options;
  const recordContent = options.settings.recordContent;
  const loopTelemetry: TelemetryOptions = { ...options.telemetry, isEnabled: true, recordInputs: false, recordOutputs: false, integrations: [] };
  let tracer: CadreTracer | null = null;
  const ready: Promise<CadreTracer | null> = import('./open-tracer.ts')
    .then(({ openTracer }) =>
      openTracer(options.settings, {
        redact: options.redact,
        telemetry: options.telemetry,
        onExportError: (error) => onError(new Error(`Traces could not be sent to ${options.settings.url}.`, { cause: error })),
      }),
    )
    .then(
      (opened) => {
        tracer = opened;
        Object.assign(loopTelemetry, opened.loopTelemetry);
        return opened;
      },
      (error: unknown) => {
        onError(new Error('Telemetry could not start; running without traces.', { cause: error }));
        loopTelemetry.isEnabled = false;
        return null;
      },
    );
  /** The contexts of finished runs, by the session their notification wakes. */
  const wakers = new Map<string, TraceCarrier[]>();

  async function storedContext(runId: string): Promise<TraceCarrier | undefined> {
    const [queued] = await store.listRunEvents(runId, { limit: 1 });
    const trace = queued?.type === 'run-queued' ? queued.data.trace : undefined;
    return isCarrier(trace) ? trace : undefined;
  }

  return {
    loopTelemetry,

    capture: () => tracer?.capture(),

    traceExecutor(executor) {
      return {
        async execute(run: RunRecord, signal: AbortSignal, context?: ExecutionContext): Promise<ExecutionOutcome> {
          const opened = await ready;
          if (!opened) return executor.execute(run, signal, context);
          const messages = context?.messages;
          const parent = await storedContext(run.id).catch((error: unknown) => {
            onError(error);
            return undefined;
          });
          return opened.inRun(run, parent, async (span) => {
            const runContext = opened.capture();
            // Each message that reaches the subagent is an event of the run's span (its text only with recordContent).
            const traced: RunMessageFeed | undefined = messages && {
              waiting: () => messages.waiting(),
              take: async () => {
                const delivered = await messages.take();
                for (const message of delivered) {
                  span.addEvent('cadre.run.message', {
                    'cadre.message.id': message.id,
                    'cadre.message.from': message.from,
                    'cadre.message.interrupt': message.interrupt,
                    ...(recordContent ? { 'cadre.message.text': message.text } : {}),
                  });
                }
                return delivered;
              },
            };
            try {
              return await executor.execute(run, signal, { ...context, messages: traced });
            } finally {
              if (runContext) setBounded(wakers, run.parent_session_id, [...(wakers.get(run.parent_session_id) ?? []), runContext], rememberedSessions);
            }
          });
        },
      };
    },

    async traceTurn(sessionId, resumed, work) {
      const opened = await ready;
      if (!opened) return work();
      const session = await store.getSession(sessionId);
      const wokenBy = resumed ? (wakers.get(sessionId) ?? []) : [];
      wakers.delete(sessionId);
      return opened.inTurn({ sessionId, agent: session?.agent ?? 'unknown', resumed, wokenBy }, work);
    },

    async traceWorkflow(workflow, work) {
      const opened = await ready;
      return opened ? opened.inWorkflow(workflow, work) : work();
    },

    toolEntries: (caller) => (tracer ? [tracer.toolEntry(caller)] : []),

    async close() {
      await (await ready)?.shutdown();
    },
  };
}

function isCarrier(value: unknown): value is TraceCarrier {
  return typeof value === 'object' && value !== null && typeof (value as TraceCarrier).traceparent === 'string';
}

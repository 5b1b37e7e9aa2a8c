import type { Attributes, Link, Span } from '@opentelemetry/api';
import type { TelemetryOptions } from 'ai';
import { ToolDeniedError } from '../approvals/tool-denied-error.ts';
import { mapToolOutput, type ToolMiddleware } from '../loop/tool-pipeline.ts';
import type { CadreTracer, TraceCarrier, TracedOutcome, TracedRun } from './cadre-tracer.ts';
import type { ResolvedTelemetry } from './telemetry-settings.ts';

/** Options of {@link openTracer}. */
export interface OpenTracerOptions {
  /** Redacts every string attribute before a span leaves the process. */
  redact: (text: string) => string;
  /** The AI SDK telemetry settings the caller gave (`functionId`, ...), kept. */
  telemetry?: TelemetryOptions;
  /** cadre's version, on the tracer. */
  version?: string;
  /** Told when spans cannot be sent (the collector is down); at most once a minute. */
  onExportError?: (error: unknown) => void;
}

/**
 * Loads the OpenTelemetry SDK (only now: nothing of it loads while telemetry is off), with an
 * OTLP/HTTP exporter (JSON or protobuf) behind a batch processor, and the AI SDK's OpenTelemetry
 * integration for the loops' spans.
 */
export async function openTracer(settings: ResolvedTelemetry, options: OpenTracerOptions): Promise<CadreTracer> {
  const [
    api,
    { AsyncLocalStorageContextManager },
    { W3CTraceContextPropagator, setGlobalErrorHandler },
    { BasicTracerProvider, BatchSpanProcessor },
    { resourceFromAttributes },
    { OpenTelemetry },
    { OTLPTraceExporter },
  ] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@ai-sdk/otel'),
    settings.protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  const { context, trace, SpanStatusCode, ROOT_CONTEXT } = api;
  // Spans find their parent through the active context; a host that set its own manager keeps it.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const propagator = new W3CTraceContextPropagator();
  // A collector that is down is said once a minute, not once per batch.
  let saidAt = -Infinity;
  const sayExportError = (error: unknown) => {
    if (performance.now() - saidAt < 60_000) return;
    saidAt = performance.now();
    options.onExportError?.(error);
  };
  setGlobalErrorHandler(sayExportError);
  // A short timeout: a process ending (cadre run) waits for the last batch at most this long.
  const exporter = new OTLPTraceExporter({ url: settings.url, timeoutMillis: 3000 });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [redactingProcessor(options.redact), new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('cadre', options.version);
  const integration = new OpenTelemetry({ tracer });

  const setter = { set: (carrier: TraceCarrier, key: string, value: string) => void (carrier[key] = value) };
  const getter = { get: (carrier: TraceCarrier, key: string) => carrier[key], keys: (carrier: TraceCarrier) => Object.keys(carrier) };
  const contextOf = (carrier: TraceCarrier | undefined) => (carrier ? propagator.extract(ROOT_CONTEXT, carrier, getter) : ROOT_CONTEXT);

  async function inSpan<T extends TracedOutcome>(span: Span, parent: ReturnType<typeof context.active>, work: () => Promise<T>): Promise<T> {
    try {
      const outcome = await context.with(trace.setSpan(parent, span), work);
      if (outcome.error !== undefined)
        span.setStatus({ code: SpanStatusCode.ERROR, message: typeof outcome.error === 'string' ? outcome.error : outcome.error.message });
      return outcome;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  }

  return {
    loopTelemetry: {
      ...options.telemetry,
      isEnabled: true,
      recordInputs: settings.recordContent,
      recordOutputs: settings.recordContent,
      integrations: [integration],
    },

    capture() {
      const carrier: TraceCarrier = {};
      propagator.inject(context.active(), carrier, setter);
      return carrier.traceparent === undefined ? undefined : carrier;
    },

    inRun(run: TracedRun, parentCarrier, work) {
      const parent = contextOf(parentCarrier);
      const attributes: Attributes = {
        'cadre.run.id': run.id,
        'cadre.session.id': run.child_session_id,
        'cadre.parent_session.id': run.parent_session_id,
        'cadre.agent': run.agent,
        'cadre.run.depth': run.depth,
        'cadre.run.mode': run.mode,
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': run.agent,
        'gen_ai.conversation.id': run.child_session_id,
      };
      if (run.parent_run_id !== null) attributes['cadre.parent_run.id'] = run.parent_run_id;
      if (run.tool_call_id !== null) attributes['gen_ai.tool.call.id'] = run.tool_call_id;
      const span = tracer.startSpan(`cadre.run ${run.agent}`, { attributes }, parent);
      return inSpan(span, parent, () => work({ addEvent: (name, eventAttributes) => span.addEvent(name, eventAttributes) }));
    },

    inWorkflow(workflow, work) {
      const parent = context.active();
      const attributes: Attributes = {
        'cadre.workflow.id': workflow.id,
        'cadre.workflow.name': workflow.name,
        'cadre.workflow.replay': workflow.replay,
        'cadre.session.id': workflow.sessionId,
      };
      return inSpan(tracer.startSpan(`cadre.workflow ${workflow.name}`, { attributes }, parent), parent, work);
    },

    inTurn(turn, work) {
      // A resumed turn is nobody's child: the runs that woke it are its links.
      const parent = turn.resumed ? ROOT_CONTEXT : context.active();
      const links: Link[] = [];
      for (const carrier of turn.wokenBy) {
        const linked = trace.getSpanContext(contextOf(carrier));
        if (linked) links.push({ context: linked });
      }
      const attributes: Attributes = {
        'cadre.session.id': turn.sessionId,
        'cadre.agent': turn.agent,
        'cadre.turn.resumed': turn.resumed,
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': turn.agent,
        'gen_ai.conversation.id': turn.sessionId,
      };
      const span = tracer.startSpan(`cadre.turn ${turn.agent}`, { attributes, links, root: turn.resumed }, parent);
      return inSpan(span, parent, work);
    },

    toolEntry(caller): ToolMiddleware {
      // A run's calls carry its id; a primary turn's, its session's (a run's primary session is not its own).
      const attributes: Attributes =
        caller.runId === null
          ? { 'cadre.session.id': caller.sessionId, 'cadre.agent': caller.agent }
          : { 'cadre.run.id': caller.runId, 'cadre.agent': caller.agent };
      return {
        name: 'trace',
        handle(_call, next) {
          // The AI SDK runs each tool inside its own `execute_tool` span: that span is marked, not a new one made.
          const span = trace.getActiveSpan();
          if (!span) return next();
          span.setAttributes(attributes);
          return mapToolOutput(next, {
            error(error) {
              span.setAttribute('cadre.tool.outcome', ToolDeniedError.isInstance(error) ? 'denied' : 'error');
              return error;
            },
            end(ok) {
              if (ok) span.setAttribute('cadre.tool.outcome', 'ok');
            },
          });
        },
      };
    },

    async shutdown() {
      await provider.shutdown().catch(sayExportError);
    },
  };
}

/** A span processor that redacts every string attribute (and exception message) as a span ends. */
function redactingProcessor(redact: (text: string) => string) {
  return {
    onStart() {},
    onEnding(span: Span & { attributes: Attributes }) {
      for (const [key, value] of Object.entries(span.attributes)) {
        if (typeof value === 'string') {
          const redacted = redact(value);
          if (redacted !== value) span.setAttribute(key, redacted);
        } else if (Array.isArray(value) && value.some((item) => typeof item === 'string')) {
          span.setAttribute(key, value.map((item) => (typeof item === 'string' ? redact(item) : item)) as string[]);
        }
      }
    },
    onEnd() {},
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}

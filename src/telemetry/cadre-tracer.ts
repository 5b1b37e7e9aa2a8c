import type { TelemetryOptions } from 'ai';
import type { ToolMiddleware } from '../loop/tool-pipeline.ts';

/** A W3C trace context (`traceparent`, maybe `tracestate`), as stored with a run. */
export type TraceCarrier = Record<string, string>;

/** What a run span is about. */
export interface TracedRun {
  id: string;
  agent: string;
  parent_session_id: string;
  child_session_id: string;
  parent_run_id: string | null;
  tool_call_id: string | null;
  depth: number;
  mode: string;
}

/** What a run's work may add to its span while it goes on. */
export interface RunSpan {
  /** Adds an event to the run's span (a message that reached the subagent). */
  addEvent(name: string, attributes: Record<string, string | number | boolean>): void;
}

/** How a traced piece of work ended, for its span's status. */
export interface TracedOutcome {
  /** An error (a message, or a record with one): the span's status is then an error. */
  error?: string | { message: string };
}

/**
 * cadre's spans around the AI SDK's own: a primary turn and a run. Model calls, steps and tool
 * calls are the AI SDK's spans (`@ai-sdk/otel`), nested under these. No OpenTelemetry type shows
 * here, so the runtime needs none of those packages while telemetry is off.
 */
export interface CadreTracer {
  /** The AI SDK's telemetry settings for every agent loop (its OpenTelemetry integration). */
  readonly loopTelemetry: TelemetryOptions;
  /** The trace context of the code running now (the tool call starting a run), to store with a run. */
  capture(): TraceCarrier | undefined;
  /**
   * Runs a run's loop in a span that nests under `parent` (the stored context of the tool call
   * that started it), wherever and whenever it runs.
   */
  inRun<T extends TracedOutcome>(run: TracedRun, parent: TraceCarrier | undefined, work: (span: RunSpan) => Promise<T>): Promise<T>;
  /**
   * Runs a workflow's script in a span (`cadre.workflow <name>`), nested under the caller's span:
   * the runs it starts nest under it. A replay after a crash is a span of its own.
   */
  inWorkflow<T extends TracedOutcome>(workflow: { id: string; name: string; sessionId: string; replay: boolean }, work: () => Promise<T>): Promise<T>;
  /**
   * Runs a primary turn in a span. A turn a person started nests under the caller's span, if any;
   * an auto-resumed turn starts a trace of its own, linked to the runs that woke it.
   */
  inTurn<T extends TracedOutcome>(
    turn: { sessionId: string; agent: string; resumed: boolean; wokenBy: readonly TraceCarrier[] },
    work: () => Promise<T>,
  ): Promise<T>;
  /**
   * The tool pipeline's tracing entry: it marks the AI SDK's span of each tool call (`execute_tool`)
   * with who made the call (`cadre.run.id` in a run, else `cadre.session.id`; `cadre.agent`) and how it ended
   * (`cadre.tool.outcome`: ok, error, or denied by a permission rule or a person).
   */
  toolEntry(caller: { sessionId: string; runId: string | null; agent: string }): ToolMiddleware;
  /** Sends what is left and stops. */
  shutdown(): Promise<void>;
}

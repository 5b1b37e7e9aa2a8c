import { isAsyncIterable, type ToolMiddleware } from './tool-pipeline.ts';

/** A tool call about to run: the model's input is complete. */
export interface StartingToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** How a call ended, as the model sees it (after redaction). */
export type ToolCallOutcome = { ok: true; output: unknown } | { ok: false; error: unknown };

/**
 * Keeps each tool call durably before it runs, so a crash mid-step cannot lose the call that
 * started work (a run, a command). Steps stream: a call starts as soon as its input is complete,
 * while later calls of the same step still arrive, so calls are recorded one by one.
 */
export interface ToolCallRecorder {
  /**
   * Stores the call; the call runs once this resolves. A rejection fails the call before it runs.
   * `tool` is the tool as it was given (look its metadata up on it), for a recorder that treats
   * calls differently by what they can do.
   */
  record(call: StartingToolCall, tool: object): Promise<void>;
  /** Told how a recorded call ended, for a step that ends without its message (stopped, failed). */
  settled?(toolCallId: string, outcome: ToolCallOutcome): void;
}

/**
 * The tool pipeline's recording entry: each call is stored before it runs (before any later entry:
 * the input check, an ask), and the recorder hears how it ended, as the model sees it (the entries
 * after this one redact it). A tool that streams its output (an async iterable) is drained: the
 * model only ever sees its last value.
 */
export function recordToolCalls(recorder: ToolCallRecorder): ToolMiddleware {
  return {
    name: 'record',
    async handle(call, next) {
      const { toolCallId, name: toolName } = call;
      await recorder.record({ toolCallId, toolName, input: call.input }, call.tool);
      try {
        const output = await lastValue(next());
        recorder.settled?.(toolCallId, { ok: true, output });
        return output;
      } catch (error) {
        recorder.settled?.(toolCallId, { ok: false, error });
        throw error;
      }
    },
  };
}

async function lastValue(output: unknown): Promise<unknown> {
  if (!isAsyncIterable(output)) return output;
  let last: unknown;
  for await (const value of output) last = value;
  return last;
}

import { isAsyncIterable, isPromiseLike, type ToolMiddleware } from './tool-pipeline.ts';

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
   * Stores the call; the call runs once this resolves (at once when it returns nothing: the record
   * needs no wait). A rejection or a throw fails the call before it runs.
   * `tool` is the tool as it was given (look its metadata up on it), for a recorder that treats
   * calls differently by what they can do.
   */
  record(call: StartingToolCall, tool: object): Promise<void> | void;
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
    handle(call, next) {
      const { toolCallId, name: toolName } = call;
      // Synchronous where nothing waits: a record that needs no wait and a tool that answers at
      // once cost no promise.
      const ended = (outcome: ToolCallOutcome) => recorder.settled?.(toolCallId, outcome);
      const run = () => {
        let output: unknown;
        try {
          output = next();
        } catch (error) {
          ended({ ok: false, error });
          throw error;
        }
        if (isPromiseLike(output)) {
          return Promise.resolve(output).then(
            (value) => (ended({ ok: true, output: value }), value),
            (error: unknown) => {
              ended({ ok: false, error });
              throw error;
            },
          );
        }
        if (isAsyncIterable(output)) return lastValue(output, ended);
        ended({ ok: true, output });
        return output;
      };
      const recorded = recorder.record({ toolCallId, toolName, input: call.input }, call.tool);
      return isPromiseLike(recorded) ? Promise.resolve(recorded).then(run) : run();
    },
  };
}

/** The last value of a tool's stream of preliminary results: the only one the model sees. */
async function lastValue(output: AsyncIterable<unknown>, ended: (outcome: ToolCallOutcome) => void): Promise<unknown> {
  let last: unknown;
  try {
    for await (const value of output) last = value;
  } catch (error) {
    ended({ ok: false, error });
    throw error;
  }
  ended({ ok: true, output: last });
  return last;
}

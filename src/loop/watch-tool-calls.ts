import { mapToolOutput, type ToolMiddleware } from './tool-pipeline.ts';

/** A tool call as it starts. */
export interface WatchedToolCall {
  toolCallId: string;
  toolName: string;
  /** The input as the model sent it (before any check). */
  input: unknown;
}

/** A tool call as it ended. */
export interface WatchedToolResult {
  toolCallId: string;
  toolName: string;
  /** False when the call failed or was refused (bad input, denied, stopped). */
  ok: boolean;
}

/** Options of {@link watchToolCalls}. */
export interface WatchToolCallsOptions {
  onToolCall?: (call: WatchedToolCall) => void;
  onToolResult?: (result: WatchedToolResult) => void;
}

/**
 * The tool pipeline's activity entry: tells `onToolCall` as a call starts, before any other entry
 * (so a run's `tool-call-start` is stored before the call's own events, an ask for approval), and
 * `onToolResult` once it ended. Synchronous: it waits for nothing itself.
 */
export function watchToolCalls({ onToolCall, onToolResult }: WatchToolCallsOptions): ToolMiddleware {
  return {
    name: 'watch',
    handle(call, next) {
      const { toolCallId, name: toolName } = call;
      onToolCall?.({ toolCallId, toolName, input: call.input });
      if (!onToolResult) return next();
      return mapToolOutput(next, { end: (ok) => onToolResult({ toolCallId, toolName, ok }) });
    },
  };
}

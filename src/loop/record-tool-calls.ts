import type { ToolExecutionOptions, ToolSet } from 'ai';

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
  /** Stores the call; the call runs once this resolves. A rejection fails the call before it runs. */
  record(call: StartingToolCall): Promise<void>;
  /** Told how a recorded call ended, for a step that ends without its message (stopped, failed). */
  settled?(toolCallId: string, outcome: ToolCallOutcome): void;
}

/**
 * The tools, each call recorded before it runs. A tool that streams its output (an async
 * iterable) is drained: the model only ever sees its last value.
 */
export function recordToolCalls(tools: ToolSet, recorder: ToolCallRecorder): ToolSet {
  const recorded: ToolSet = {};
  for (const [toolName, tool] of Object.entries(tools)) {
    const execute = tool.execute;
    if (!execute) {
      recorded[toolName] = tool;
      continue;
    }
    recorded[toolName] = {
      ...tool,
      async execute(input: unknown, executionOptions: ToolExecutionOptions<any>) {
        const { toolCallId } = executionOptions;
        await recorder.record({ toolCallId, toolName, input });
        try {
          const output = await lastValue(execute(input, executionOptions));
          recorder.settled?.(toolCallId, { ok: true, output });
          return output;
        } catch (error) {
          recorder.settled?.(toolCallId, { ok: false, error });
          throw error;
        }
      },
    } as ToolSet[string];
  }
  return recorded;
}

async function lastValue(output: unknown): Promise<unknown> {
  if (output == null || typeof (output as AsyncIterable<unknown>)[Symbol.asyncIterator] !== 'function') return output;
  let last: unknown;
  for await (const value of output as AsyncIterable<unknown>) last = value;
  return last;
}

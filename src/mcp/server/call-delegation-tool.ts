import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolSet } from 'ai';

/**
 * Calls one of cadre's delegation tools the way a model's call runs, and gives its answer as an
 * MCP tool result: section 3's text, or the tool error (bad input, an unknown run) with `isError`.
 * A tool that streams progress (an async-iterable `execute`) answers with its last value's `output`.
 */
export async function callDelegationTool(
  tools: ToolSet,
  name: string,
  input: unknown,
  { signal, toolCallId }: { signal?: AbortSignal; toolCallId?: string } = {},
): Promise<CallToolResult> {
  const tool = tools[name];
  if (!tool?.execute) return errorResult(`Unknown tool '${name}'. Tools: ${Object.keys(tools).join(', ')}`);
  try {
    const answer = await tool.execute(input, { toolCallId: toolCallId ?? `mcp_${name}`, messages: [], abortSignal: signal, context: {} } as never);
    return { content: [{ type: 'text', text: textOf(await lastValue(answer)) }] };
  } catch (error) {
    return errorResult(error instanceof Error ? error.message : String(error));
  }
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

async function lastValue(answer: unknown): Promise<unknown> {
  if (answer === null || typeof answer !== 'object' || !(Symbol.asyncIterator in answer)) return answer;
  let last: unknown;
  for await (const value of answer as AsyncIterable<unknown>) last = value;
  return last;
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  const output = (value as { output?: unknown } | null)?.output;
  return typeof output === 'string' ? output : JSON.stringify(value);
}

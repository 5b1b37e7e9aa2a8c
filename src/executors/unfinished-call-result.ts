import type { ToolResultPart } from 'ai';
import type { ToolCallOutcome } from '../loop/record-tool-calls.ts';
import type { RunRecord } from '../store/records.ts';
import { isFinished } from '../store/records.ts';

/** A tool call as stored in an assistant message. */
export interface StoredToolCall {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: unknown;
  providerOptions?: Record<string, Record<string, unknown> | undefined>;
}

/** Why a call has no result of its own. */
export type UnfinishedReason = 'process-died' | 'loop-ended' | 'interrupted';

/**
 * The result given to a call that never finished (its process died, or its turn was stopped or
 * failed mid-step): what is known of it, so the model can pick up from there. For a delegation,
 * the runs the call started and where each stands; for anything else, that it may have run.
 */
export function unfinishedCallResult(call: StoredToolCall, reason: UnfinishedReason, runs: readonly RunRecord[]): ToolResultPart {
  const opening =
    reason === 'process-died'
      ? 'The process stopped before this call finished, so its result was lost.'
      : reason === 'interrupted'
        ? 'Interrupted: a new message arrived before this call finished.'
        : 'The turn ended (stopped or failed) before this call finished.';
  const started = runs.filter((run) => run.tool_call_id === call.toolCallId);
  let text: string;
  if (started.length > 0) {
    text = `${opening} Runs it started: ${started.map(describeRun).join('; ')}.`;
  } else if (call.toolName === 'agent' || call.toolName === 'agent_parallel') {
    text = `${opening} It started no run.`;
  } else {
    text = `${opening} The call may have run, partly or fully: check its effects before you repeat it.`;
  }
  return { type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output: { type: 'text', value: text } };
}

/** The result of a call that ended while its step did not, as the AI SDK would have given it. */
export function settledCallResult(call: StoredToolCall, outcome: ToolCallOutcome): ToolResultPart {
  const output: ToolResultPart['output'] = outcome.ok
    ? typeof outcome.output === 'string'
      ? { type: 'text', value: outcome.output }
      : { type: 'json', value: JSON.parse(JSON.stringify(outcome.output ?? null)) }
    : { type: 'error-text', value: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) };
  return { type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output };
}

function describeRun(run: RunRecord): string {
  const name = `${run.id} (${run.agent})`;
  if (isFinished(run.status)) return `${name} ended ${run.status}; read its result with agent_output`;
  const recovered = run.warnings.some((warning) => warning.kind === 'recovered') ? ', recovered by another process,' : '';
  if (run.mode === 'background') return `${name}${recovered} is ${run.status} in the background; its result will arrive as a notification`;
  return `${name} is ${run.status}`;
}

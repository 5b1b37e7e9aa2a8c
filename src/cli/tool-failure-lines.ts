import type { MessageRecord } from '../store/records.ts';

/** Longest error text a tool failure line shows. */
const maxErrorChars = 200;

/** A tool call of the primary agent that failed, as one line for the person. */
export interface ToolFailureLine {
  /** The call's id, so a view prints each failure once (a step's messages can be published again). */
  toolCallId: string;
  /** `agent failed: Unknown agent 'researcher' ...`: the tool, and the first line of its error. */
  line: string;
}

/**
 * The failed tool calls in a stored message of the primary agent's session (a `tool` message whose
 * results are `error-text` or `error-json`), each as one line. Denied calls are left out: the
 * approval line says those already.
 */
export function toolFailureLines(message: Pick<MessageRecord, 'role' | 'content'>): ToolFailureLine[] {
  if (message.role !== 'tool' || !Array.isArray(message.content)) return [];
  const failures: ToolFailureLine[] = [];
  for (const part of message.content as unknown[]) {
    if (typeof part !== 'object' || part === null) continue;
    const { type, toolCallId, toolName, output } = part as { type?: unknown; toolCallId?: unknown; toolName?: unknown; output?: unknown };
    if (type !== 'tool-result' || typeof output !== 'object' || output === null) continue;
    const result = output as { type?: unknown; value?: unknown };
    if (result.type !== 'error-text' && result.type !== 'error-json') continue;
    const text = typeof result.value === 'string' ? result.value : (JSON.stringify(result.value) ?? '');
    // A result in the agent shape (agent_parallel's sections) starts with headers: its `error:` line says why.
    const lines = text.trim().split('\n');
    const body = lines.indexOf('');
    const reason =
      lines.find((line) => line.startsWith('error: '))?.slice('error: '.length) ??
      (lines[0]?.startsWith('agent: ') && body > 0 ? lines.slice(body + 1).find((line) => line.trim() !== '') : undefined);
    const first = (reason ?? lines[0])?.trim() || 'no reason given';
    const shown = first.length > maxErrorChars ? `${first.slice(0, maxErrorChars - 1)}…` : first;
    failures.push({ toolCallId: String(toolCallId), line: `${String(toolName)} failed: ${shown}` });
  }
  return failures;
}

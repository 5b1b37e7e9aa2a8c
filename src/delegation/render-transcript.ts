import type { MessageRecord } from '../store/records.ts';

/** A child session's conversation as plain text, for `agent_output` with `detail: transcript`. */
export function renderTranscript(messages: readonly MessageRecord[]): string {
  if (messages.length === 0) return '(the transcript is empty)';
  return messages.map((message) => `[${message.role}]\n${renderContent(message.content)}`).join('\n\n');
}

function renderContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content
    .map((part: Record<string, unknown>) => {
      switch (part.type) {
        case 'text':
          return String(part.text);
        case 'tool-call':
          return `→ ${String(part.toolName)}(${JSON.stringify(part.input).slice(0, 300)})`;
        case 'tool-result': {
          const output = part.output as { value?: unknown } | undefined;
          const value = typeof output?.value === 'string' ? output.value : JSON.stringify(output?.value ?? output);
          return `← ${String(part.toolName)}: ${value.length > 1000 ? `${value.slice(0, 1000)}…` : value}`;
        }
        default:
          return `(${String(part.type)})`;
      }
    })
    .join('\n');
}

import type { MessageRecord } from '../store/records.ts';

/** The text outputs of every call of a tool in stored messages, in order (for tests). */
export function toolOutputs(messages: MessageRecord[], toolName: string): string[] {
  return messages
    .filter((message) => message.role === 'tool')
    .flatMap((message) => message.content as Array<{ type: string; toolName: string; output: { type: string; value: unknown } }>)
    .filter((part) => part.type === 'tool-result' && part.toolName === toolName)
    .map((part) => String(part.output.value));
}

import type { ModelMessage } from 'ai';
import type { MessageRecord, NewMessage } from '../store/records.ts';

/** Stored messages back into AI SDK model messages. */
export function toModelMessages(records: readonly MessageRecord[]): ModelMessage[] {
  return records.map((record) => ({ role: record.role, content: record.content }) as ModelMessage);
}

/** AI SDK model messages as rows for the store. */
export function toNewMessages(sessionId: string, messages: readonly ModelMessage[], createdAt: string): NewMessage[] {
  return messages.map((message) => ({ session_id: sessionId, role: message.role, content: message.content, created_at: createdAt }));
}

/** The plain text of a stored or model message (text parts joined). */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { type: 'text'; text: string } => typeof part === 'object' && part !== null && part.type === 'text')
    .map((part) => part.text)
    .join('');
}

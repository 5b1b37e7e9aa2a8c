import type { MessageRecord, RunEventRecord, RunMessage, RunRecord } from '../store/records.ts';

/**
 * A child session's conversation as plain text, for `agent_output` with `detail: transcript`.
 * `sent` names the messages that are messages sent to the run once it started (by `seq`, from
 * their `message-deliver` events), so each shows where it arrived with who sent it.
 */
export function renderTranscript(messages: readonly MessageRecord[], sent: ReadonlyMap<number, RunMessage> = new Map()): string {
  if (messages.length === 0) return '(the transcript is empty)';
  return messages
    .map((message) => {
      const from = sent.get(message.seq);
      const label = from
        ? `${message.role}: message from ${from.from === 'person' ? 'a person' : 'the parent'}${from.interrupt ? ', interrupting' : ''}`
        : message.role;
      return `[${label}]\n${renderContent(message.content)}`;
    })
    .join('\n\n');
}

/** The messages sent to runs, by the `seq` of the child session's message that carries each (their `message-deliver` events). */
export function sentMessagesBySeq(runs: ReadonlyArray<{ run: Pick<RunRecord, 'messages'>; events: readonly RunEventRecord[] }>): Map<number, RunMessage> {
  const bySeq = new Map<number, RunMessage>();
  for (const { run, events } of runs) {
    for (const event of events) {
      if (event.type !== 'message-deliver') continue;
      const message = run.messages?.find((each) => each.id === event.data.message_id);
      if (message && typeof event.data.message_seq === 'number') bySeq.set(event.data.message_seq, message);
    }
  }
  return bySeq;
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

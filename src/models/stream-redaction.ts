import type { StreamPart } from './compose-model.ts';
import type { PartSink, PartTransformer } from './pipe-parts.ts';
import type { SecretRedactor } from './secret-redactor.ts';

/** Text held back at most, waiting for white space, before it is let through anyway. */
const maxHeldCharacters = 2048;

/**
 * Redacts a model's stream part by part. A secret may arrive split over two deltas, so each
 * text or reasoning block holds back its last, unfinished word until white space (or the block's
 * end) shows it is whole; keys hold no white space, so none slips through in pieces. What is held
 * is let through before a block's end, the stream's `finish` or `error` part, and its end.
 */
export function createStreamRedaction(redactor: SecretRedactor): PartTransformer {
  const held = new Map<string, { type: string; text: string }>();

  function release(id: string, everything: boolean, sink: PartSink): void {
    const entry = held.get(id);
    if (entry === undefined || entry.text === '') return;
    const cut = everything || entry.text.length > maxHeldCharacters ? entry.text.length : lastWhiteSpace(entry.text) + 1;
    if (cut <= 0) return;
    const delta = redactor.redact(entry.text.slice(0, cut));
    entry.text = entry.text.slice(cut);
    sink.enqueue({ type: entry.type, id, delta });
  }

  function flush(sink: PartSink): void {
    for (const id of [...held.keys()]) release(id, true, sink);
  }

  return {
    transform(part: StreamPart, sink: PartSink): void {
      switch (part.type) {
        case 'text-delta':
        case 'reasoning-delta': {
          const id = String(part.id);
          const delta = String(part.delta ?? '');
          const entry = held.get(id);
          if (entry === undefined) held.set(id, { type: part.type, text: delta });
          else entry.text += delta;
          release(id, false, sink);
          return;
        }
        case 'text-end':
        case 'reasoning-end': {
          const id = String(part.id);
          release(id, true, sink);
          held.delete(id);
          sink.enqueue(part);
          return;
        }
        case 'tool-input-delta':
          sink.enqueue({ ...part, delta: redactor.redact(String(part.delta ?? '')) });
          return;
        case 'tool-call':
          sink.enqueue(typeof part.input === 'string' ? { ...part, input: redactToolInput(part.input, redactor) } : part);
          return;
        case 'finish':
        case 'error':
          flush(sink);
          sink.enqueue(part);
          return;
        default:
          sink.enqueue(part);
      }
    },
    flush,
  };
}

function lastWhiteSpace(text: string): number {
  for (let index = text.length - 1; index >= 0; index--) {
    const code = text.charCodeAt(index);
    if (code === 32 || code === 10 || code === 9 || code === 13) return index;
  }
  return -1;
}

/** Tool-call arguments (JSON) redacted value by value, so the JSON stays valid. */
export function redactToolInput(input: string, redactor: SecretRedactor): string {
  // Without escapes, the values read as they are written: nothing found in the raw text means
  // nothing in the values either.
  if (!input.includes('\\') && redactor.redact(input) === input) return input;
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return redactor.redact(input);
  }
  const redacted = redactor.redactDeep(parsed);
  return JSON.stringify(redacted) === JSON.stringify(parsed) ? input : JSON.stringify(redacted);
}

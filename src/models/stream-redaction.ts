import type { SecretRedactor } from './secret-redactor.ts';

/** A part of a model's stream, of any specification version. */
export interface StreamPart {
  type: string;
  [key: string]: unknown;
}

/** Text held back at most, waiting for white space, before it is let through anyway. */
const maxHeldCharacters = 2048;

/**
 * Redacts a model's stream part by part. A secret may arrive split over two deltas, so each
 * text or reasoning block holds back its last, unfinished word until white space (or the block's
 * end) shows it is whole; keys hold no white space, so none slips through in pieces.
 */
export function createStreamRedaction(redactor: SecretRedactor) {
  const held = new Map<string, { type: string; text: string }>();
  let characters = 0;

  function release(id: string, everything: boolean): StreamPart[] {
    const entry = held.get(id);
    if (entry === undefined || entry.text === '') return [];
    const cut = everything || entry.text.length > maxHeldCharacters ? entry.text.length : lastWhiteSpace(entry.text) + 1;
    if (cut <= 0) return [];
    const delta = redactor.redact(entry.text.slice(0, cut));
    entry.text = entry.text.slice(cut);
    return [{ type: entry.type, id, delta }];
  }

  return {
    /** The parts to pass on for `part` (none while a word is held back). */
    push(part: StreamPart): StreamPart[] {
      switch (part.type) {
        case 'text-delta':
        case 'reasoning-delta': {
          const id = String(part.id);
          const delta = String(part.delta ?? '');
          if (part.type === 'text-delta') characters += delta.length;
          const entry = held.get(id) ?? { type: part.type, text: '' };
          entry.text += delta;
          held.set(id, entry);
          return release(id, false);
        }
        case 'text-end':
        case 'reasoning-end': {
          const id = String(part.id);
          const out = release(id, true);
          held.delete(id);
          return [...out, part];
        }
        case 'tool-input-delta':
          return [{ ...part, delta: redactor.redact(String(part.delta ?? '')) }];
        case 'tool-call':
          return typeof part.input === 'string' ? [{ ...part, input: redactToolInput(part.input, redactor) }] : [part];
        case 'finish':
          return [...this.flush(), part];
        default:
          return [part];
      }
    },
    /** Everything still held back, redacted. */
    flush(): StreamPart[] {
      const out = [...held.keys()].flatMap((id) => release(id, true));
      return out;
    },
    /** Characters of text the model sent so far. */
    outputCharacters(): number {
      return characters;
    },
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

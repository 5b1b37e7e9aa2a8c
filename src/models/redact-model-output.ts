import type { ContentPart, GenerateResult, ModelMiddleware } from './compose-model.ts';
import { pipeParts } from './pipe-parts.ts';
import type { SecretRedactor } from './secret-redactor.ts';
import { createStreamRedaction, redactToolInput } from './stream-redaction.ts';

/**
 * The model stack's redaction entry: output text, reasoning and tool-call arguments reach cadre
 * with every secret hidden, streamed (a word held back until it is whole) or not. Errors are
 * redacted by the retry entry, which words them.
 * @example composeModel(model, [redactModelOutput(redactor), reliableCalls({ redactor })])
 */
export function redactModelOutput(redactor: SecretRedactor): ModelMiddleware {
  return {
    wrapGenerate: ({ doGenerate }) => doGenerate().then((result) => redactGenerated(result, redactor)),
    wrapStream: ({ doStream }) => doStream().then((result) => ({ ...result, stream: pipeParts(result.stream, createStreamRedaction(redactor)) })),
  };
}

/** An unstreamed answer with its parts redacted: the answer itself when nothing changed. */
function redactGenerated(result: GenerateResult, redactor: SecretRedactor): GenerateResult {
  let content: ContentPart[] | undefined;
  for (let index = 0; index < result.content.length; index++) {
    const part = result.content[index];
    const redacted = redactPart(part, redactor);
    if (redacted !== part) (content ??= [...result.content])[index] = redacted;
  }
  return content === undefined ? result : { ...result, content };
}

/** A content part of an unstreamed answer with its text or tool-call arguments redacted. */
function redactPart(part: ContentPart, redactor: SecretRedactor): ContentPart {
  if ((part.type === 'text' || part.type === 'reasoning') && typeof part.text === 'string') {
    const text = redactor.redact(part.text);
    return text === part.text ? part : { ...part, text };
  }
  if (part.type === 'tool-call' && typeof part.input === 'string') {
    const input = redactToolInput(part.input, redactor);
    return input === part.input ? part : { ...part, input };
  }
  return part;
}

import { composeModel, compositionOf } from './compose-model.ts';
import { markPromptCache, readsAnthropicCacheMarks } from './mark-prompt-cache.ts';
import { redactModelOutput } from './redact-model-output.ts';
import { reliableCalls, reliableCallsEntry, type ReliableCallsOptions } from './reliable-calls.ts';
import type { LanguageModelInstance } from './resolve-model.ts';
import type { SecretRedactor } from './secret-redactor.ts';

export { retryAfterMs } from './reliable-calls.ts';

/** Options of {@link reliableModel}. */
export interface ReliableModelOptions extends ReliableCallsOptions {
  /** Hides keys in errors, output text and tool-call arguments. */
  redactor: SecretRedactor;
}

/**
 * The model with cadre's one retry policy, timeouts and redaction at the provider boundary: its
 * model stack (`composeModel`) with the redaction entry outside the retry entry
 * (`redactModelOutput`, `reliableCalls`). Every request waits for the provider's 429 gate, is
 * aborted when it gets no response (or, streamed, no new chunk) for `timeoutMs`, and is retried up
 * to `maxRetries` times when it failed before any output: the same whether streamed or not.
 * `retry-after` is honoured up to 60 s; beyond it the call fails at once saying when to retry. A
 * stream that breaks after output keeps it and ends with an error saying so. Errors, output text
 * and tool-call arguments are redacted before cadre sees them. Call it with the SDK's own retries
 * off (`maxRetries: 0`), so this is the only policy; a model that has it already is returned as it is.
 * An Anthropic model also gets its prompt-cache marks on every request (`markPromptCache`).
 * @example reliableModel(resolveModel('openai:gpt-5'), { redactor: createSecretRedactor(), timeoutMs: 600_000, maxRetries: 2 })
 */
export function reliableModel(model: LanguageModelInstance, options: ReliableModelOptions): LanguageModelInstance {
  if (compositionOf(model)?.middleware.some((entry) => reliableCallsEntry in entry)) return model;
  const entries = [redactModelOutput(options.redactor), reliableCalls(options)];
  // Anthropic's cache needs marks in every request; other providers cache by themselves (or not) and pay nothing here.
  if (readsAnthropicCacheMarks(model)) entries.unshift(markPromptCache());
  return composeModel(model, entries) as LanguageModelInstance;
}

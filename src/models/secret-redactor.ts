import { APICallError } from 'ai';
import { redactSecrets } from '../store/redact-secrets.ts';

/** What a configured secret's value is replaced with (docs/configuration.md). */
export const redactedMarker = '[redacted]';

/** Options of {@link createSecretRedactor}. */
export interface SecretRedactorOptions {
  /**
   * Environment whose key variables are secrets: `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
   * `CADRE_API_KEY`, and any variable named like `*_API_KEY`, `*_TOKEN` or `*_SECRET` whose
   * value has at least 8 characters. @default process.env
   */
  env?: Record<string, string | undefined>;
  /**
   * More values to hide: API keys and header values given in code or configuration. A header
   * value like `Bearer <token>` also hides the token on its own.
   */
  values?: Iterable<string | undefined>;
}

/** Redacts secrets from provider text before cadre keeps or shows it. */
export interface SecretRedactor {
  /** How many configured values it hides (the known patterns come on top). */
  readonly size: number;
  /** `text` with every configured value replaced by `[redacted]` and the known credential shapes by `[REDACTED]`. */
  redact(text: string): string;
  /** A JSON-like value with every string redacted: a copy where something changed, else the value itself. */
  redactDeep<T>(value: T): T;
  /** An error safe to keep: the same class for provider errors (`APICallError`), every text field redacted. */
  redactError(error: unknown): unknown;
}

/** Secrets shorter than this are left alone: they would match ordinary words. */
const minimumLength = 8;
const secretVariable = /(?:_API_KEY|_TOKEN|_SECRET)$/;
const knownVariables = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'CADRE_API_KEY'];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Builds the runtime's redactor once from the environment and configured values: the actual
 * values of keys and headers, then the known credential patterns of `redactSecrets`. Provider
 * errors, model output, tool-call arguments, tool results and logs pass through it, so nothing
 * cadre stores or prints holds a key, even one the provider echoes back.
 * @example
 * const redactor = createSecretRedactor({ env: { OPENAI_API_KEY: 'k-0123456789' } });
 * redactor.redact('bad key k-0123456789') // 'bad key [redacted]'
 */
export function createSecretRedactor(options: SecretRedactorOptions = {}): SecretRedactor {
  const env = options.env ?? process.env;
  const values = new Set<string>();
  const add = (value: string | undefined) => {
    const trimmed = value?.trim();
    if (trimmed === undefined || trimmed.length < minimumLength) return;
    values.add(trimmed);
    // `Bearer <token>`, `Basic <credentials>`: the credential alone may be echoed too.
    for (const part of trimmed.split(/\s+/)) if (part.length >= minimumLength) values.add(part);
  };
  for (const [name, value] of Object.entries(env)) {
    if (knownVariables.includes(name) || secretVariable.test(name.toUpperCase())) add(value);
  }
  for (const value of options.values ?? []) add(value);
  // Longest first, so a value containing another is replaced whole.
  const sorted = [...values].sort((a, b) => b.length - a.length);
  const matcher = sorted.length === 0 ? undefined : new RegExp(sorted.map(escapeRegExp).join('|'), 'g');

  function redact(text: string): string {
    const withoutValues = matcher === undefined ? text : text.replace(matcher, redactedMarker);
    return redactSecrets(withoutValues);
  }

  function redactDeep<T>(value: T): T {
    if (typeof value === 'string') return redact(value) as T;
    if (value instanceof Error) return redactError(value) as T;
    // Copied only where something changed: most tool results hold no secret.
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      value.forEach((item, index) => {
        const redacted = redactDeep(item);
        if (redacted !== item) (copy ??= [...value])[index] = redacted;
      });
      return (copy ?? value) as T;
    }
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      let copy: Record<string, unknown> | undefined;
      for (const [key, item] of Object.entries(value)) {
        const redacted = redactDeep(item);
        if (redacted !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = redacted;
      }
      return (copy ?? value) as T;
    }
    return value;
  }

  function redactError(error: unknown): unknown {
    if (typeof error === 'string') return redact(error);
    if (!(error instanceof Error) && !APICallError.isInstance(error)) return error;
    const original = error as Error;
    const cause = original.cause === undefined ? undefined : redactError(original.cause);
    let copy: Error;
    if (APICallError.isInstance(error)) {
      copy = new APICallError({
        message: redact(error.message),
        url: redact(error.url),
        requestBodyValues: redactDeep(error.requestBodyValues),
        statusCode: error.statusCode,
        responseHeaders: error.responseHeaders === undefined ? undefined : redactDeep(error.responseHeaders),
        responseBody: error.responseBody === undefined ? undefined : redact(error.responseBody),
        cause,
        isRetryable: error.isRetryable,
        data: redactDeep(error.data),
      });
    } else {
      copy = new Error(redact(original.message), { cause });
      copy.name = original.name;
      // Typed fields of other error classes (codes, statuses, markers) stay readable.
      for (const key of Reflect.ownKeys(original)) {
        if (key === 'message' || key === 'stack' || key === 'cause' || key === 'name') continue;
        (copy as unknown as Record<PropertyKey, unknown>)[key] = redactDeep((original as unknown as Record<PropertyKey, unknown>)[key]);
      }
      Object.setPrototypeOf(copy, Object.getPrototypeOf(original));
    }
    if (original.stack !== undefined) copy.stack = redact(original.stack);
    return copy;
  }

  return { size: values.size, redact, redactDeep, redactError };
}

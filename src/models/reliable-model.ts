import { APICallError } from 'ai';
import { ModelCallError } from './model-call-error.ts';
import { createProviderGates, realSleep, type ProviderGates, type Sleep } from './provider-gates.ts';
import type { LanguageModelInstance } from './resolve-model.ts';
import type { SecretRedactor } from './secret-redactor.ts';
import { attemptControl, createWatchdog, type AttemptControl } from './attempt-control.ts';
import { createStreamRedaction, redactToolInput, type StreamPart } from './stream-redaction.ts';
import { forwardModel, type ModelObject } from '../util/forward-model.ts';

/** Options of {@link reliableModel}. */
export interface ReliableModelOptions {
  /** No response (unstreamed) or no new chunk (streamed) for this long aborts the attempt. @default 600000 */
  timeoutMs?: number;
  /** Retries of a request that failed before any output (resets, 5xx, 429, timeouts). @default 2 */
  maxRetries?: number;
  /** Hides keys in errors, output text and tool-call arguments. */
  redactor: SecretRedactor;
  /** Shared 429 gates; pass the runtime's so all its models' requests to a provider back off together. */
  gates?: ProviderGates;
  /** The gate this model's requests go through. @default the model's provider name without its API suffix */
  gateKey?: string;
  /** The first retry's delay when the provider announces none; it doubles for each further retry. @default 2000 */
  retryDelayMs?: number;
  /** The longest `retry-after` honoured; a longer one fails the request at once. @default 60000 */
  maxRetryAfterMs?: number;
  /** The clock in epoch milliseconds. @default Date.now */
  nowMs?: () => number;
  /** @default real timers */
  sleep?: Sleep;
}

/** What this wrapper relies on in a model object of any specification version the SDK accepts. */
type ReliableModelObject = ModelObject<GenerateResult, StreamResult>;
interface CallOptions {
  abortSignal?: AbortSignal;
  [key: string]: unknown;
}
interface ContentPart {
  type: string;
  text?: string;
  input?: string;
  [key: string]: unknown;
}
interface GenerateResult {
  content: ContentPart[];
  [key: string]: unknown;
}
interface StreamResult {
  stream: ReadableStream<StreamPart>;
  [key: string]: unknown;
}

const wrapped = Symbol.for('cadre.reliable-model');

/** Parts that carry no output: a stream failing after only these is retried. */
const preludeParts = new Set(['stream-start', 'response-metadata', 'text-start', 'reasoning-start', 'ping', 'raw']);

/** Network failures that the SDK does not wrap in a retryable `APICallError` (a reset mid-body, say). */
const networkCodes = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED']);

function seconds(ms: number): string {
  const value = ms / 1000;
  return `${Number.isInteger(value) ? value : Number(value.toFixed(value < 1 ? 3 : 1))} s`;
}

function attemptsText(attempts: number): string {
  return attempts === 1 ? '1 attempt' : `${attempts} attempts`;
}

function networkCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current !== null && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && networkCodes.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The delay the provider asked for in `retry-after-ms` or `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(error: unknown, nowMs: number): number | undefined {
  if (!APICallError.isInstance(error) || error.responseHeaders === undefined) return undefined;
  const headers = Object.fromEntries(Object.entries(error.responseHeaders).map(([name, value]) => [name.toLowerCase(), value]));
  const inMs = Number.parseFloat(headers['retry-after-ms'] ?? '');
  if (Number.isFinite(inMs) && inMs >= 0) return inMs;
  const after = headers['retry-after'];
  if (after === undefined) return undefined;
  const inSeconds = Number(after.trim());
  if (after.trim() !== '' && Number.isFinite(inSeconds) && inSeconds >= 0) return inSeconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

interface Failure {
  retryable: boolean;
  timeout: boolean;
  rateLimited: boolean;
  retryAfterMs: number | undefined;
}

function classify(error: unknown, timedOut: boolean, nowMs: number): Failure {
  if (timedOut) return { retryable: true, timeout: true, rateLimited: false, retryAfterMs: undefined };
  if (APICallError.isInstance(error)) {
    return { retryable: error.isRetryable || networkCode(error) !== undefined, timeout: false, rateLimited: error.statusCode === 429, retryAfterMs: retryAfterMs(error, nowMs) };
  }
  // undici's `fetch failed` and `terminated` carry the socket's error as their cause, with its code.
  return { retryable: networkCode(error) !== undefined, timeout: false, rateLimited: false, retryAfterMs: undefined };
}

/**
 * The model with cadre's one retry policy, timeouts and redaction at the provider boundary.
 * Every request waits for the provider's 429 gate, is aborted when it gets no response (or, streamed,
 * no new chunk) for `timeoutMs`, and is retried up to `maxRetries` times when it failed before any
 * output: the same whether streamed or not. `retry-after` is honoured up to 60 s; beyond it the call
 * fails at once saying when to retry. A stream that breaks after output keeps it and ends with an
 * error saying so. Errors, output text and tool-call arguments are redacted before cadre sees them.
 * Call it with the SDK's own retries off (`maxRetries: 0`), so this is the only policy.
 * @example reliableModel(resolveModel('openai:gpt-5'), { redactor: createSecretRedactor(), timeoutMs: 600_000, maxRetries: 2 })
 */
export function reliableModel(model: LanguageModelInstance, options: ReliableModelOptions): LanguageModelInstance {
  if ((model as unknown as Record<symbol, unknown>)[wrapped] === true) return model;
  const inner = model as unknown as ReliableModelObject;
  const { redactor } = options;
  const timeoutMs = options.timeoutMs ?? 600_000;
  const maxRetries = options.maxRetries ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 2000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const nowMs = options.nowMs ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  const gates = options.gates ?? createProviderGates({ nowMs, sleep });
  const gateKey = options.gateKey ?? inner.provider.split('.')[0];
  const watchdog = createWatchdog(timeoutMs, nowMs);

  /** Runs `attempt` under the retry policy; it gets a fresh control per attempt. */
  async function withRetries<T>(callerSignal: AbortSignal | undefined, attempt: (control: AttemptControl) => Promise<T>): Promise<T> {
    for (let attempts = 1; ; attempts++) {
      if (gates.openAt(gateKey) !== undefined) await gates.wait(gateKey, callerSignal);
      const control = attemptControl(callerSignal, watchdog);
      let failure: Failure;
      let caught: unknown;
      try {
        return await attempt(control);
      } catch (error) {
        control.end(true);
        if (callerSignal?.aborted) throw error;
        caught = error;
        failure = classify(error, control.timedOut, nowMs());
      }
      if (!failure.retryable) throw redactor.redactError(caught);
      const cause = redactor.redactError(caught);
      if (failure.retryAfterMs !== undefined && failure.retryAfterMs > maxRetryAfterMs) {
        const retryAt = new Date(nowMs() + failure.retryAfterMs).toISOString();
        throw new ModelCallError(
          `The model provider asks to retry after ${seconds(failure.retryAfterMs)} (at ${retryAt}), longer than cadre waits (${seconds(maxRetryAfterMs)}): retry after ${retryAt}.`,
          { failure: 'retry_later', attempts, retryAt, cause },
        );
      }
      if (attempts > maxRetries) {
        if (failure.timeout) {
          throw new ModelCallError(`The model provider did not answer within ${seconds(timeoutMs)} (${attemptsText(attempts)}).`, { failure: 'timeout', attempts, cause });
        }
        throw new ModelCallError(describeFailure(cause, attempts), { failure: 'retries_exhausted', attempts, cause });
      }
      const delay = failure.retryAfterMs ?? retryDelayMs * 2 ** (attempts - 1);
      // A 429 closes the provider's gate: every request to it waits together, this retry included.
      if (failure.rateLimited) gates.closeUntil(gateKey, nowMs() + delay);
      else await sleep(delay, callerSignal);
    }
  }

  async function doGenerate(callOptions: CallOptions): Promise<GenerateResult> {
    const result = await withRetries(callOptions.abortSignal, async (control) => {
      try {
        return await control.race(inner.doGenerate({ ...callOptions, abortSignal: control.signal }));
      } finally {
        control.end();
      }
    });
    const content = result.content.map((part) => redactPart(part, redactor));
    return content.every((part, index) => part === result.content[index]) ? result : { ...result, content };
  }

  async function doStream(callOptions: CallOptions): Promise<StreamResult> {
    const callerSignal = callOptions.abortSignal;
    const opened = await withRetries(callerSignal, async (control) => {
      const result = await control.race(inner.doStream({ ...callOptions, abortSignal: control.signal }));
      const reader = result.stream.getReader();
      const prelude: StreamPart[] = [];
      try {
        // Read up to the first output: a failure before it is retried like an unstreamed one.
        for (;;) {
          const next = await control.race(reader.read());
          if (next.done) return { result, reader, control, prelude, done: true };
          control.touch();
          if (next.value.type === 'error') throw next.value.error;
          prelude.push(next.value);
          if (!preludeParts.has(next.value.type)) {
            control.pause();
            return { result, reader, control, prelude, done: false };
          }
        }
      } catch (error) {
        reader.cancel().catch(() => {});
        throw error;
      }
    });
    const { result, reader, control, prelude } = opened;
    const redaction = createStreamRedaction(redactor);
    let ended = false;
    /** Parts passed on so far. */
    let emitted = 0;
    const stream = new ReadableStream<StreamPart>({
      start(controller) {
        for (const part of prelude) for (const out of redaction.push(part)) controller.enqueue(out);
        if (opened.done) {
          for (const out of redaction.flush()) controller.enqueue(out);
          control.end();
          ended = true;
          controller.close();
        }
      },
      async pull(controller) {
        // A pull that enqueues nothing (a word held back) would never be called again: read on.
        const before = emitted;
        while (!ended && emitted === before) await pullOnce(controller);
      },
      cancel(reason) {
        ended = true;
        control.end(true);
        return reader.cancel(reason);
      },
    });
    function emit(controller: ReadableStreamDefaultController<StreamPart>, part: StreamPart) {
      emitted++;
      controller.enqueue(part);
    }
    async function pullOnce(controller: ReadableStreamDefaultController<StreamPart>): Promise<void> {
      if (ended) return;
      const fail = (error: unknown) => {
        for (const out of redaction.flush()) emit(controller, out);
        emit(controller, { type: 'error', error: brokenStream(error, control.timedOut, redaction.outputCharacters(), timeoutMs, redactor) });
        finish(true);
      };
      const finish = (abort: boolean) => {
        ended = true;
        control.end(abort);
        if (abort) reader.cancel().catch(() => {});
        controller.close();
      };
      let next: ReadableStreamReadResult<StreamPart>;
      // The clock runs only while we wait on the provider: a consumer busy elsewhere (a long tool
      // call between parts) is not a silent provider.
      control.touch();
      try {
        next = await control.race(reader.read());
      } catch (error) {
        if (callerSignal?.aborted) {
          ended = true;
          control.end(true);
          controller.error(error);
          return;
        }
        fail(error);
        return;
      }
      if (next.done) {
        for (const out of redaction.flush()) emit(controller, out);
        finish(false);
        return;
      }
      control.pause();
      if (next.value.type === 'error') {
        fail(next.value.error);
        return;
      }
      for (const out of redaction.push(next.value)) emit(controller, out);
    }
    return { ...result, stream };
  }

  // Marked, so wrapping a wrapped model again leaves it alone.
  const reliable = Object.assign(forwardModel(inner, { doGenerate, doStream }), { [wrapped]: true });
  return reliable as unknown as LanguageModelInstance;
}

/** What the last of several failed attempts says, with the count. */
function describeFailure(cause: unknown, attempts: number): string {
  const message = ((cause as Error | undefined)?.message ?? String(cause)).split('\n')[0];
  if (APICallError.isInstance(cause)) return `The model provider failed (${attemptsText(attempts)}): ${message}`;
  const code = networkCode(cause);
  return `The connection to the model provider failed (${attemptsText(attempts)}): ${message}${code === undefined || message.includes(code) ? '' : ` (${code})`}`;
}

/** The error a stream ends with when it breaks after output: the output is kept, and the message says so. */
function brokenStream(error: unknown, timedOut: boolean, characters: number, timeoutMs: number, redactor: SecretRedactor): ModelCallError {
  const cause = redactor.redactError(error);
  const kept = `the ${characters} characters it sent are kept as the partial result`;
  if (timedOut) {
    return new ModelCallError(`The model provider stopped answering for ${seconds(timeoutMs)} in the middle of its answer; ${kept}.`, { failure: 'timeout', attempts: 1, cause });
  }
  const reason = ((cause as Error | undefined)?.message ?? String(cause)).split('\n')[0];
  return new ModelCallError(`The model provider's answer broke off (${reason}); ${kept}.`, { failure: 'stream_broken', attempts: 1, cause });
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

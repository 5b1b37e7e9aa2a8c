import { APICallError } from 'ai';
import { createAttemptController, type Attempt } from './attempt-control.ts';
import type { GenerateResult, ModelCallOptions, ModelMiddleware, ModelObject, StreamPart, StreamResult } from './compose-model.ts';
import { ModelCallError } from './model-call-error.ts';
import { partStream, type PartSink } from './pipe-parts.ts';
import { createProviderGates, realSleep, type ProviderGates, type Sleep } from './provider-gates.ts';
import type { SecretRedactor } from './secret-redactor.ts';
import { systemNowMs } from '../util/clock.ts';

/** Options of {@link reliableCalls}. */
export interface ReliableCallsOptions {
  /** No response (unstreamed) or no new chunk (streamed) for this long aborts the attempt. @default 600000 */
  timeoutMs?: number;
  /** Retries of a request that failed before any output (resets, 5xx, 429, timeouts). @default 2 */
  maxRetries?: number;
  /** Hides keys in the errors it passes on. */
  redactor: Pick<SecretRedactor, 'redactError'>;
  /** Shared 429 gates; pass the runtime's so all its models' requests to a provider back off together. */
  gates?: ProviderGates;
  /** The gate this model's requests go through. @default the model's provider name without its API suffix */
  gateKey?: string;
  /** The first retry's delay when the provider announces none; it doubles for each further retry. @default 2000 */
  retryDelayMs?: number;
  /** The longest `retry-after` honoured; a longer one fails the request at once. @default 60000 */
  maxRetryAfterMs?: number;
  /** The clock in epoch milliseconds. @default systemNowMs */
  nowMs?: () => number;
  /** @default real timers */
  sleep?: Sleep;
}

/** Marks the entries {@link reliableCalls} makes, so a model is given one retry policy, not two. */
export const reliableCallsEntry = Symbol.for('cadre.reliable-calls');

/** Parts that carry no output: a stream failing after only these is retried. */
const preludeParts = new Set(['stream-start', 'response-metadata', 'text-start', 'reasoning-start', 'ping', 'raw']);

/** Network failures that the SDK does not wrap in a retryable `APICallError` (a reset mid-body, say). */
const networkCodes = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

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
    return {
      retryable: error.isRetryable || networkCode(error) !== undefined,
      timeout: false,
      rateLimited: error.statusCode === 429,
      retryAfterMs: retryAfterMs(error, nowMs),
    };
  }
  // undici's `fetch failed` and `terminated` carry the socket's error as their cause, with its code.
  return { retryable: networkCode(error) !== undefined, timeout: false, rateLimited: false, retryAfterMs: undefined };
}

/** A call's options for one attempt: the attempt's own abort signal. */
function attemptOptions(params: ModelCallOptions, attempt: Attempt): ModelCallOptions {
  return { ...params, abortSignal: attempt.signal };
}

/** A stream opened by an attempt, read up to its first output. */
interface OpenedStream {
  result: StreamResult;
  reader: ReadableStreamDefaultReader<StreamPart>;
  attempt: Attempt;
  prelude: StreamPart[];
  done: boolean;
}

/**
 * The model stack's entry for cadre's one retry policy and its timeouts, with the model's one
 * attempt controller (make one entry per model). Every request waits for the provider's 429 gate,
 * is aborted when it gets no response (or, streamed, no new chunk) for `timeoutMs`, and is retried
 * up to `maxRetries` times when it failed before any output: the same whether streamed or not.
 * `retry-after` is honoured up to 60 s; beyond it the call fails at once saying when to retry. A
 * stream that breaks after output keeps it and ends with an error saying so. Errors are redacted.
 * Retries and timeouts are one entry because a retry is decided by how its attempt ended (timed
 * out or not), and a stream's attempt lasts until its first output.
 * @example composeModel(model, [redactModelOutput(redactor), reliableCalls({ redactor, timeoutMs: 600_000 })])
 */
export function reliableCalls(options: ReliableCallsOptions): ModelMiddleware {
  const { redactor } = options;
  const timeoutMs = options.timeoutMs ?? 600_000;
  const maxRetries = options.maxRetries ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 2000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const nowMs = options.nowMs ?? systemNowMs;
  const sleep = options.sleep ?? realSleep;
  const gates = options.gates ?? createProviderGates({ nowMs, sleep });
  const attempts = createAttemptController({ timeoutMs, nowMs });
  /** Set at the first call: the model's provider is known then. */
  let gateKey = options.gateKey;

  /**
   * Runs attempt number `count` of a call (after the gate), then the next ones as the policy
   * says. Written without `async` on the way of a call that succeeds at once: most do.
   */
  function attempt<T>(count: number, callerSignal: AbortSignal | undefined, once: (attempt: Attempt) => Promise<T>): Promise<T> {
    if (gates.openAt(gateKey!) !== undefined) return gates.wait(gateKey!, callerSignal).then(() => attemptNow(count, callerSignal, once));
    return attemptNow(count, callerSignal, once);
  }

  function attemptNow<T>(count: number, callerSignal: AbortSignal | undefined, once: (attempt: Attempt) => Promise<T>): Promise<T> {
    const current = attempts.start(callerSignal);
    let pending: Promise<T>;
    try {
      pending = once(current);
    } catch (error) {
      pending = Promise.reject(error);
    }
    return pending.then(undefined, (error: unknown) => {
      current.end(true);
      return retry(error, current.timedOut, count, callerSignal, once);
    });
  }

  /** After a failed attempt: the next one, or the error to fail with. */
  async function retry<T>(
    error: unknown,
    timedOut: boolean,
    count: number,
    callerSignal: AbortSignal | undefined,
    once: (attempt: Attempt) => Promise<T>,
  ): Promise<T> {
    if (callerSignal?.aborted) throw error;
    const failure = classify(error, timedOut, nowMs());
    if (!failure.retryable) throw redactor.redactError(error);
    const cause = redactor.redactError(error);
    if (failure.retryAfterMs !== undefined && failure.retryAfterMs > maxRetryAfterMs) {
      const retryAt = new Date(nowMs() + failure.retryAfterMs).toISOString();
      throw new ModelCallError(
        `The model provider asks to retry after ${seconds(failure.retryAfterMs)} (at ${retryAt}), longer than cadre waits (${seconds(maxRetryAfterMs)}): retry after ${retryAt}.`,
        { failure: 'retry_later', attempts: count, retryAt, cause },
      );
    }
    if (count > maxRetries) {
      if (failure.timeout) {
        throw new ModelCallError(`The model provider did not answer within ${seconds(timeoutMs)} (${attemptsText(count)}).`, {
          failure: 'timeout',
          attempts: count,
          cause,
        });
      }
      throw new ModelCallError(describeFailure(cause, count), { failure: 'retries_exhausted', attempts: count, cause });
    }
    const delay = failure.retryAfterMs ?? retryDelayMs * 2 ** (count - 1);
    // A 429 closes the provider's gate: every request to it waits together, this retry included.
    if (failure.rateLimited) gates.closeUntil(gateKey!, nowMs() + delay);
    else await sleep(delay, callerSignal);
    return attempt(count + 1, callerSignal, once);
  }

  function generate(model: ModelObject, params: ModelCallOptions): Promise<GenerateResult> {
    gateKey ??= model.provider.split('.')[0];
    return attempt(1, params.abortSignal, (current) =>
      current.race(model.doGenerate(attemptOptions(params, current))).then((result) => {
        current.end();
        return result;
      }),
    );
  }

  async function openStream(model: ModelObject, params: ModelCallOptions, current: Attempt): Promise<OpenedStream> {
    const result = await current.race(model.doStream(attemptOptions(params, current)));
    const reader = result.stream.getReader();
    const prelude: StreamPart[] = [];
    try {
      // Read up to the first output: a failure before it is retried like an unstreamed one.
      for (;;) {
        const next = await current.race(reader.read());
        if (next.done) return { result, reader, attempt: current, prelude, done: true };
        current.touch();
        if (next.value.type === 'error') throw next.value.error;
        prelude.push(next.value);
        if (!preludeParts.has(next.value.type)) {
          current.pause();
          return { result, reader, attempt: current, prelude, done: false };
        }
      }
    } catch (error) {
      reader.cancel().catch(() => {});
      throw error;
    }
  }

  async function stream(model: ModelObject, params: ModelCallOptions): Promise<StreamResult> {
    gateKey ??= model.provider.split('.')[0];
    const callerSignal = params.abortSignal;
    const opened = await attempt(1, callerSignal, (current) => openStream(model, params, current));
    return { ...opened.result, stream: partStream(streamSource(opened, callerSignal)) };
  }

  /** Reads the rest of an opened stream, under the attempt's inactivity clock. */
  function streamSource(opened: OpenedStream, callerSignal: AbortSignal | undefined) {
    const { reader, attempt: current } = opened;
    let prelude: StreamPart[] | undefined = opened.prelude;
    let ended = false;
    /** Characters of text the model sent so far. */
    let characters = 0;
    const pass = (sink: PartSink, part: StreamPart) => {
      if (part.type === 'text-delta') characters += String(part.delta ?? '').length;
      sink.enqueue(part);
    };
    const finish = (abort: boolean) => {
      ended = true;
      current.end(abort);
      if (abort) reader.cancel().catch(() => {});
    };
    return {
      async pull(sink: PartSink): Promise<boolean> {
        if (prelude !== undefined) {
          for (const part of prelude) pass(sink, part);
          prelude = undefined;
          if (opened.done) finish(false);
          return !opened.done;
        }
        if (ended) return false;
        // The clock runs only while we wait on the provider: a consumer busy elsewhere (a long tool
        // call between parts) is not a silent provider.
        current.touch();
        let next: ReadableStreamReadResult<StreamPart>;
        try {
          next = await current.race(reader.read());
        } catch (error) {
          if (callerSignal?.aborted) {
            ended = true;
            current.end(true);
            throw error;
          }
          sink.enqueue({ type: 'error', error: brokenStream(error, current.timedOut, characters, timeoutMs, redactor) });
          finish(true);
          return false;
        }
        if (next.done) {
          finish(false);
          return false;
        }
        current.pause();
        if (next.value.type === 'error') {
          sink.enqueue({ type: 'error', error: brokenStream(next.value.error, current.timedOut, characters, timeoutMs, redactor) });
          finish(true);
          return false;
        }
        pass(sink, next.value);
        return true;
      },
      cancel(reason: unknown) {
        ended = true;
        current.end(true);
        return reader.cancel(reason);
      },
    };
  }

  return Object.assign(
    {
      wrapGenerate: ({ model, params }: { model: ModelObject; params: ModelCallOptions }) => generate(model, params),
      wrapStream: ({ model, params }: { model: ModelObject; params: ModelCallOptions }) => stream(model, params),
    },
    { [reliableCallsEntry]: true },
  );
}

/** What the last of several failed attempts says, with the count. */
function describeFailure(cause: unknown, attempts: number): string {
  const message = ((cause as Error | undefined)?.message ?? String(cause)).split('\n')[0];
  if (APICallError.isInstance(cause)) return `The model provider failed (${attemptsText(attempts)}): ${message}`;
  const code = networkCode(cause);
  return `The connection to the model provider failed (${attemptsText(attempts)}): ${message}${code === undefined || message.includes(code) ? '' : ` (${code})`}`;
}

/** The error a stream ends with when it breaks after output: the output is kept, and the message says so. */
function brokenStream(error: unknown, timedOut: boolean, characters: number, timeoutMs: number, redactor: Pick<SecretRedactor, 'redactError'>): ModelCallError {
  const cause = redactor.redactError(error);
  const kept = `the ${characters} characters it sent are kept as the partial result`;
  if (timedOut) {
    return new ModelCallError(`The model provider stopped answering for ${seconds(timeoutMs)} in the middle of its answer; ${kept}.`, {
      failure: 'timeout',
      attempts: 1,
      cause,
    });
  }
  const reason = ((cause as Error | undefined)?.message ?? String(cause)).split('\n')[0];
  return new ModelCallError(`The model provider's answer broke off (${reason}); ${kept}.`, { failure: 'stream_broken', attempts: 1, cause });
}

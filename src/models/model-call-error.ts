import { CadreError } from '../errors/cadre-error.ts';

/** Why a model call failed after cadre's retry policy was applied. */
export type ModelCallFailure =
  /** The provider sent no response (or no new chunk) within `limits.modelTimeoutMs`, on every attempt. */
  | 'timeout'
  /** The provider asked to be retried later than cadre waits (60 s). */
  | 'retry_later'
  /** Every attempt failed with a retryable error (a reset, a 5xx, a 429). */
  | 'retries_exhausted'
  /** A streamed answer broke off after some output, which is kept as the partial result. */
  | 'stream_broken';

/**
 * A model call that failed for good: the run fails `model_error` with this message, which says
 * what happened and how many attempts were made; `cause` is the provider's (redacted) last error.
 */
export class ModelCallError extends CadreError {
  readonly failure: ModelCallFailure;
  /** Requests sent, retries included. */
  readonly attempts: number;
  /** When the provider said to retry (ISO-8601), for `retry_later`. */
  readonly retryAt: string | undefined;

  constructor(message: string, options: { failure: ModelCallFailure; attempts: number; retryAt?: string; cause?: unknown }) {
    super('CadreModelCallError', message, { cause: options.cause });
    this.failure = options.failure;
    this.attempts = options.attempts;
    this.retryAt = options.retryAt;
  }

  static override isInstance(error: unknown): error is ModelCallError {
    return CadreError.isInstance(error) && error.name === 'CadreModelCallError';
  }
}

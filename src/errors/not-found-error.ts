import { CadreError } from './cadre-error.ts';

/** What a {@link NotFoundError} did not find. */
export type NotFoundKind = 'session' | 'run';

/**
 * A session or run that is not stored (a mistyped id, or one of another database). The HTTP API
 * answers it with 404; the CLI with exit code 2.
 */
export class NotFoundError extends CadreError {
  readonly kind: NotFoundKind;
  readonly id: string;

  constructor(kind: NotFoundKind, id: string, options: { cause?: unknown } = {}) {
    super('CadreNotFoundError', `No ${kind} '${id}'.`, options);
    this.kind = kind;
    this.id = id;
  }

  static override isInstance(error: unknown): error is NotFoundError {
    return CadreError.isInstance(error) && error.name === 'CadreNotFoundError';
  }
}

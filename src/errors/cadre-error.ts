const marker = Symbol.for('cadre.error');

/**
 * Base of cadre's errors: a stable `name`, typed fields and `cause`.
 * `CadreError.isInstance` survives duplicate copies of the package, unlike `instanceof`.
 */
export class CadreError extends Error {
  readonly [marker] = true;

  constructor(name: string, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = name;
  }

  /** Whether `error` is any cadre error. */
  static isInstance(error: unknown): error is CadreError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}

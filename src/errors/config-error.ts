import { CadreError } from './cadre-error.ts';

/**
 * Bad usage, configuration or input that a person must fix (CLI exit code 2).
 * The message says what to set or change.
 */
export class ConfigError extends CadreError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('CadreConfigError', message, options);
  }

  static override isInstance(error: unknown): error is ConfigError {
    return CadreError.isInstance(error) && error.name === 'CadreConfigError';
  }
}

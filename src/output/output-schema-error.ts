import { CadreError } from '../errors/cadre-error.ts';

/** An `output_schema` that is not a JSON Schema object cadre can use; its message names what to fix. */
export class OutputSchemaError extends CadreError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('CadreOutputSchemaError', message, options);
  }

  static override isInstance(error: unknown): error is OutputSchemaError {
    return CadreError.isInstance(error) && error.name === 'CadreOutputSchemaError';
  }
}

import { CadreError } from '../errors/cadre-error.ts';

/** A tool input the model must fix; its message tells the model how. */
export class ToolInputError extends CadreError {
  constructor(message: string) {
    super('CadreToolInputError', message);
  }

  static override isInstance(error: unknown): error is ToolInputError {
    return CadreError.isInstance(error) && error.name === 'CadreToolInputError';
  }

  /** The AI SDK shows a tool error to the model as `toString()`: only the actionable message. */
  override toString(): string {
    return this.message;
  }
}

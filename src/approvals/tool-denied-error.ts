import { CadreError } from '../errors/cadre-error.ts';

/** A tool call the permission rules or a person refused; its message tells the model what and why. */
export class ToolDeniedError extends CadreError {
  constructor(message: string) {
    super('CadreToolDeniedError', message);
  }

  static override isInstance(error: unknown): error is ToolDeniedError {
    return CadreError.isInstance(error) && error.name === 'CadreToolDeniedError';
  }

  /** The AI SDK shows a tool error to the model as `toString()`: only the message. */
  override toString(): string {
    return this.message;
  }
}

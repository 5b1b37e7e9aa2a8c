import { CadreError } from '../../errors/cadre-error.ts';

/** `bash` refused because `sandbox.mode` is `required` and this machine has no working OS sandbox. */
export class SandboxUnavailableError extends CadreError {
  /** Why there is no sandbox: what is missing or what failed. */
  readonly reason: string;

  constructor(reason: string) {
    super(
      'CadreSandboxUnavailableError',
      `bash is refused: sandbox.mode is 'required' and there is no OS sandbox here (${reason}). ` +
        'Do the task with the other tools, or say that a person must install the sandbox or change sandbox.mode in cadre.config.json.',
    );
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is SandboxUnavailableError {
    return CadreError.isInstance(error) && error.name === 'CadreSandboxUnavailableError';
  }

  /** The AI SDK shows a tool error to the model as `toString()`: only the message. */
  override toString(): string {
    return this.message;
  }
}

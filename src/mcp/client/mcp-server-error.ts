import { CadreError } from '../../errors/cadre-error.ts';

/** An MCP server that could not be started, or that went away: what a run's tool call or `cadre agents` reports. */
export class McpServerError extends CadreError {
  readonly server: string;

  constructor(server: string, message: string, options?: { cause?: unknown }) {
    super('McpServerError', message, options);
    this.server = server;
  }

  /** Whether `error` is an {@link McpServerError}, also from another copy of cadre. */
  static isInstance(error: unknown): error is McpServerError {
    return CadreError.isInstance(error) && error.name === 'McpServerError';
  }
}

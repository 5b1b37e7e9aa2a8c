import { mapToolOutput, type ToolMiddleware } from '../loop/tool-pipeline.ts';
import type { SecretRedactor } from '../models/secret-redactor.ts';
import { toolInfo } from './define-tool.ts';

/**
 * The tool pipeline's redaction entry: what a tool returns, and the errors it throws, with every
 * secret redacted before the model or the store sees them (a tool may print an environment
 * variable). Tools whose output cannot carry a secret nobody redacted (`carriesSecrets: false`:
 * the delegation tools, whose results are model output redacted as it arrived) are left alone.
 */
export function redactToolOutput(redactor: Pick<SecretRedactor, 'redactDeep' | 'redactError'>): ToolMiddleware {
  const handlers = {
    value: (value: unknown) => redactor.redactDeep(value),
    error: (error: unknown) => redactor.redactError(error),
  };
  return {
    name: 'redact',
    appliesTo: ({ tool }) => toolInfo(tool)?.carriesSecrets !== false,
    handle: (_call, next) => mapToolOutput(next, handlers),
  };
}

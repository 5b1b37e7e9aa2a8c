import { ConfigError } from '../errors/index.ts';

/** The providers a `provider:model-id` spec may name. */
export const supportedProviders = ['anthropic', 'openai', 'openai-compatible', 'ollama'] as const;

/** One of {@link supportedProviders}. */
export type ModelProvider = (typeof supportedProviders)[number];

/** A model spec split into its parts. */
export interface ModelSpec {
  /** The provider before the first colon. */
  provider: ModelProvider;
  /** Everything after the first colon; it may hold colons itself, like `ollama:llama3.1:8b`. */
  modelId: string;
}

function isSupported(provider: string): provider is ModelProvider {
  return (supportedProviders as readonly string[]).includes(provider);
}

/**
 * Splits `provider:model-id` and checks the provider.
 * @throws {ConfigError} for a malformed spec or an unknown provider, listing the supported ones.
 * @example parseModelSpec('ollama:llama3.1:8b') // { provider: 'ollama', modelId: 'llama3.1:8b' }
 */
export function parseModelSpec(spec: string): ModelSpec {
  const colon = spec.indexOf(':');
  const provider = colon === -1 ? '' : spec.slice(0, colon);
  const modelId = colon === -1 ? '' : spec.slice(colon + 1);
  const supported = `supported providers: ${supportedProviders.join(', ')}`;
  if (provider === '' || modelId.trim() === '' || /\s/.test(spec)) {
    const example = 'like anthropic:claude-sonnet-4-5';
    throw new ConfigError(`Model '${spec}' is not a valid model spec: use provider:model-id, ${example} (${supported})`);
  }
  if (!isSupported(provider)) {
    throw new ConfigError(`Model '${spec}' names an unknown provider '${provider}' (${supported})`);
  }
  return { provider, modelId };
}

import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { ConfigError } from '../errors/index.ts';
import { parseModelSpec } from './parse-model-spec.ts';

/** An AI SDK language model object, as opposed to a gateway model id string. */
export type LanguageModelInstance = Exclude<LanguageModel, string>;

/** Where {@link resolveModel} finds base URLs and keys. */
export interface ResolveModelOptions {
  /** Base URL of the provider's API; required for `openai-compatible`. @default env.CADRE_BASE_URL */
  baseURL?: string;
  /**
   * An explicit API key, e.g. from code; it wins over the provider's variable. `CADRE_API_KEY` is
   * read from `env` after the provider's variable, so do not pass it here.
   * @default env.ANTHROPIC_API_KEY or env.OPENAI_API_KEY, then env.CADRE_API_KEY
   */
  apiKey?: string;
  /** Environment to read keys from. @default process.env */
  env?: Record<string, string | undefined>;
}

/** Ollama's OpenAI-compatible endpoint on its default port. */
export const defaultOllamaBaseURL = 'http://127.0.0.1:11434/v1';

/** Whether `value` is an AI SDK language model object. */
export function isLanguageModel(value: unknown): value is LanguageModelInstance {
  return typeof value === 'object' && value !== null && 'specificationVersion' in value && 'doStream' in value;
}

function nonEmpty(value: string | undefined) {
  return value === undefined || value.trim() === '' ? undefined : value;
}

// A key pasted into the wrong place (say, as the model spec) must not be echoed back.
function redact(message: string, options: ResolveModelOptions, env: Record<string, string | undefined>) {
  const fromEnv = Object.entries(env).filter(([name]) => /KEY|TOKEN|SECRET/.test(name));
  const secrets = [options.apiKey, ...fromEnv.map(([, value]) => value)];
  return secrets.reduce<string>((text, secret) => (secret !== undefined && secret.length >= 8 ? text.replaceAll(secret, '[redacted]') : text), message);
}

function requireKey(spec: string, key: string | undefined, variable: string) {
  if (key !== undefined) return key;
  throw new ConfigError(`Model '${spec}' needs an API key: set ${variable} or CADRE_API_KEY (keys are read from the environment, never from config files)`);
}

function createModel(spec: string, options: ResolveModelOptions, env: Record<string, string | undefined>) {
  const { provider, modelId } = parseModelSpec(spec);
  const baseURL = nonEmpty(options.baseURL) ?? nonEmpty(env.CADRE_BASE_URL);
  const cadreKey = nonEmpty(options.apiKey) ?? nonEmpty(env.CADRE_API_KEY);
  switch (provider) {
    case 'anthropic': {
      const key = nonEmpty(options.apiKey) ?? nonEmpty(env.ANTHROPIC_API_KEY) ?? cadreKey;
      const apiKey = requireKey(spec, key, 'ANTHROPIC_API_KEY');
      return createAnthropic({ apiKey, baseURL })(modelId);
    }
    case 'openai': {
      const key = nonEmpty(options.apiKey) ?? nonEmpty(env.OPENAI_API_KEY) ?? cadreKey;
      const apiKey = requireKey(spec, key, 'OPENAI_API_KEY');
      return createOpenAI({ apiKey, baseURL })(modelId);
    }
    case 'openai-compatible': {
      if (baseURL === undefined) {
        throw new ConfigError(`Model '${spec}' needs a base URL: pass --base-url, set CADRE_BASE_URL, or set "baseURL" in cadre.config.json`);
      }
      const compatible = createOpenAICompatible({
        name: 'openai-compatible',
        baseURL,
        apiKey: cadreKey,
        includeUsage: true,
      });
      return compatible.chatModel(modelId);
    }
    case 'ollama': {
      const ollama = createOpenAICompatible({
        name: 'ollama',
        baseURL: baseURL ?? defaultOllamaBaseURL,
        apiKey: cadreKey,
        includeUsage: true,
      });
      return ollama.chatModel(modelId);
    }
  }
}

/**
 * Turns a model spec `provider:model-id` into an AI SDK language model; a model object passes
 * through unchanged. Constructing makes no network call.
 * @throws {ConfigError} for a malformed spec, an unknown provider, or a missing key or base URL;
 * no message ever contains a key.
 * @example resolveModel('ollama:llama3.1:8b')
 */
export function resolveModel(spec: string | LanguageModelInstance, options: ResolveModelOptions = {}): LanguageModelInstance {
  if (isLanguageModel(spec)) return spec;
  const env = options.env ?? process.env;
  if (typeof spec !== 'string') {
    throw new ConfigError('A model must be a provider:model-id string or an AI SDK language model object');
  }
  try {
    return createModel(spec.trim(), options, env);
  } catch (error) {
    if (ConfigError.isInstance(error)) throw new ConfigError(redact(error.message, options, env));
    throw error;
  }
}

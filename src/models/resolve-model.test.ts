import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../errors/index.ts';
import { describeModel } from './describe-model.ts';
import { resolveModel, type LanguageModelInstance } from './resolve-model.ts';

const secret = 'sk-test-0123456789abcdef';

function thrownBy(action: () => unknown): Error {
  try {
    action();
  } catch (error) {
    expect(ConfigError.isInstance(error)).toBe(true);
    return error as Error;
  }
  throw new Error('expected a ConfigError');
}

beforeEach(() => {
  vi.stubGlobal('fetch', () => {
    throw new Error('no network in unit tests');
  });
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('resolveModel', () => {
  it.each([
    ['anthropic:claude-sonnet-4-5', { ANTHROPIC_API_KEY: secret }, 'anthropic', 'claude-sonnet-4-5'],
    ['openai:gpt-5-mini', { OPENAI_API_KEY: secret }, 'openai', 'gpt-5-mini'],
    ['openai:gpt-5-mini', { CADRE_API_KEY: secret }, 'openai', 'gpt-5-mini'],
    ['openai-compatible:qwen3', { CADRE_BASE_URL: 'http://localhost:8000/v1' }, 'openai-compatible', 'qwen3'],
    ['ollama:llama3.1:8b', {}, 'ollama', 'llama3.1:8b'],
  ])('resolves %s without a network call', (spec, env, provider, modelId) => {
    const model = resolveModel(spec, { env });
    expect(model.provider.split('.')[0]).toBe(provider);
    expect(model.modelId).toBe(modelId);
    expect(describeModel(model)).toBe(spec);
  });

  it('passes a language model object through unchanged', () => {
    const model = { specificationVersion: 'v4', provider: 'test', modelId: 'm', doStream: async () => {} };
    expect(resolveModel(model as unknown as LanguageModelInstance)).toBe(model);
  });

  it('names the provider variable when the key is missing', () => {
    const error = thrownBy(() => resolveModel('anthropic:claude-sonnet-4-5', { env: {} }));
    expect(error.message).toMatch(/^Model 'anthropic:claude-sonnet-4-5' needs an API key: set ANTHROPIC_API_KEY or CADRE_API_KEY/);
    expect(thrownBy(() => resolveModel('openai:gpt-5', { env: { OPENAI_API_KEY: '' } })).message).toContain('OPENAI_API_KEY');
  });

  it.each([
    ['anthropic:claude-sonnet-4-5', 'ANTHROPIC_API_KEY', 'x-api-key', secret],
    ['openai:gpt-5', 'OPENAI_API_KEY', 'authorization', `Bearer ${secret}`],
  ])("sends an explicit key before the environment's (%s)", async (spec, variable, header, expected) => {
    const sent: Array<string | null> = [];
    vi.stubGlobal('fetch', async (_url: string, init: RequestInit) => {
      sent.push(new Headers(init.headers).get(header));
      throw new Error('no network in unit tests');
    });
    const model = resolveModel(spec, {
      apiKey: secret,
      env: { [variable]: 'sk-from-the-environment-0000', CADRE_API_KEY: 'sk-cadre-key-000000000' },
    }) as unknown as {
      doGenerate(options: unknown): Promise<unknown>;
    };
    await expect(model.doGenerate({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })).rejects.toThrow();
    expect(sent).toEqual([expected]);
  });

  it('asks for a base URL for openai-compatible and accepts one from the options', () => {
    const error = thrownBy(() => resolveModel('openai-compatible:qwen3', { env: {} }));
    expect(error.message).toBe(`Model 'openai-compatible:qwen3' needs a base URL: pass --base-url, set CADRE_BASE_URL, or set "baseURL" in cadre.config.json`);
    expect(resolveModel('openai-compatible:qwen3', { baseURL: 'http://localhost:1/v1', env: {} }).modelId).toBe('qwen3');
  });

  it.each(['claude-sonnet-4-5', 'anthropic:', ':model', 'anthropic: claude', ''])('rejects the malformed spec %j and lists the providers', (spec) => {
    expect(thrownBy(() => resolveModel(spec, { env: {} })).message).toContain('supported providers: anthropic, openai, openai-compatible, ollama');
  });

  it('rejects an unknown provider by name', () => {
    expect(thrownBy(() => resolveModel('mistral:large', { env: {} })).message).toContain("unknown provider 'mistral'");
  });

  it('never puts a key in an error message, even when the key was given as the spec', () => {
    const env = { ANTHROPIC_API_KEY: secret, CADRE_API_KEY: `${secret}-cadre` };
    const messages = [
      thrownBy(() => resolveModel(secret, { env })).message,
      thrownBy(() => resolveModel(`mistral:${secret}`, { env: {}, apiKey: secret })).message,
      thrownBy(() => resolveModel(`openai-compatible:${secret}`, { env })).message,
    ];
    for (const message of messages) expect(message).not.toContain(secret);
  });
});

describe('describeModel', () => {
  it('returns a spec as it is and labels a model object provider:modelId', () => {
    expect(describeModel(' anthropic:claude-sonnet-4-5 ')).toBe('anthropic:claude-sonnet-4-5');
    const model = { specificationVersion: 'v4', provider: 'acme.chat', modelId: 'x-1', doStream: async () => {} };
    expect(describeModel(model as unknown as LanguageModelInstance)).toBe('acme:x-1');
  });
});

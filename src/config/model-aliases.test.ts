import { describe, expect, it } from 'vitest';
import { defaultModelAliases, resolveAgentModel, resolveModelAlias } from './model-aliases.ts';

describe('resolveModelAlias', () => {
  it('resolves the short names of Claude Code agent files through the defaults', () => {
    expect(resolveModelAlias('sonnet')).toBe(defaultModelAliases.sonnet);
    expect(resolveModelAlias('opus')).toMatch(/^anthropic:claude-opus-/);
    expect(resolveModelAlias('haiku')).toMatch(/^anthropic:claude-haiku-/);
  });

  it("reads opencode's provider/model as provider:model unless an alias names it", () => {
    expect(resolveModelAlias('anthropic/claude-sonnet-4-5', {})).toBe('anthropic:claude-sonnet-4-5');
    expect(resolveModelAlias('openrouter/meta/llama', {})).toBe('openrouter:meta/llama');
    expect(resolveModelAlias('corp/model', { 'corp/model': 'openai-compatible:corp-model' })).toBe('openai-compatible:corp-model');
  });

  it('follows an alias of an alias, leaves specs and unknown names as they are, and stops on a loop', () => {
    expect(resolveModelAlias('fast', { fast: 'small', small: 'openai:gpt-mini' })).toBe('openai:gpt-mini');
    expect(resolveModelAlias('openai:gpt-4o', { openai: 'x' })).toBe('openai:gpt-4o');
    expect(resolveModelAlias('unknown', {})).toBe('unknown');
    expect(resolveModelAlias('a', { a: 'b', b: 'a' })).toMatch(/^[ab]$/);
  });
});

describe('resolveAgentModel', () => {
  const key = { ANTHROPIC_API_KEY: 'sk-ant-test', OPENAI_API_KEY: 'sk-test' };

  it('resolves Claude tiers and ids to Anthropic where its key is set', () => {
    expect(resolveAgentModel('sonnet', { env: key })).toEqual({ spec: defaultModelAliases.sonnet });
    expect(resolveAgentModel('claude-opus-4-1', { env: key })).toEqual({ spec: 'anthropic:claude-opus-4-1' });
    expect(resolveAgentModel('anthropic/claude-sonnet-4-5', { env: key })).toEqual({ spec: 'anthropic:claude-sonnet-4-5' });
    expect(resolveAgentModel('openai/gpt-4o', { env: key })).toEqual({ spec: 'openai:gpt-4o' });
  });

  it("falls back to the session's model, saying why, without the key, for an unknown name or an unsupported provider", () => {
    expect(resolveAgentModel('sonnet', { env: {} })).toEqual({ spec: null, fallback: "'sonnet' needs ANTHROPIC_API_KEY, which is not set" });
    expect(resolveAgentModel('fable', { env: key })).toMatchObject({ spec: null, fallback: expect.stringContaining('no model cadre knows') });
    expect(resolveAgentModel('openrouter/horizon-beta', { env: key })).toMatchObject({
      spec: null,
      fallback: expect.stringContaining("provider 'openrouter'"),
    });
  });

  it('takes modelAliases of the configuration first, and a cadre spec as written', () => {
    const aliases = { ...defaultModelAliases, sonnet: 'ollama:qwen3', fast: 'openai:gpt-mini' };
    expect(resolveAgentModel('sonnet', { aliases, env: {} })).toEqual({ spec: 'ollama:qwen3' });
    expect(resolveAgentModel('fast', { aliases, env: {} })).toEqual({ spec: 'openai:gpt-mini' });
    expect(resolveAgentModel('anthropic:claude-sonnet-4-5', { env: {} })).toEqual({ spec: 'anthropic:claude-sonnet-4-5' });
  });
});

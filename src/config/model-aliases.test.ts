import { describe, expect, it } from 'vitest';
import { defaultModelAliases, resolveModelAlias } from './model-aliases.ts';

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

import { describe, expect, it } from 'vitest';
import { scriptedLanguageModel } from '../testing/scripted-language-model.ts';
import { createModelCatalog } from './model-catalog.ts';
import { createSecretRedactor } from './secret-redactor.ts';

const reliability = { redactor: createSecretRedactor({ env: {} }) };

describe('createModelCatalog', () => {
  it('gives the default model instance, wrapped once, for no name and for its own label', () => {
    const models = createModelCatalog({ model: scriptedLanguageModel([]), reliability });
    const model = models.modelFor(undefined);
    expect(models.modelFor(undefined)).toBe(model);
    expect(models.modelFor(models.defaultLabel)).toBe(model);
  });

  it('resolves a spec once per spec, aliases included, and keeps the default spec behind its alias', () => {
    const models = createModelCatalog({ model: 'ollama:llama3', aliases: { local: 'ollama:llama3', other: 'ollama:qwen' }, reliability, env: {} });
    expect(models.defaultLabel).toBe('ollama:llama3');
    expect(models.modelFor('local')).toBe(models.modelFor(undefined));
    expect(models.modelFor('other')).toBe(models.modelFor('ollama:qwen'));
    expect(models.modelFor('other')).not.toBe(models.modelFor(undefined));
    expect(models.specOf('sonnet')).toBe('anthropic:claude-sonnet-4-5');
  });

  it("falls back to the session's model for an agent whose provider has no key here", () => {
    const models = createModelCatalog({ model: 'ollama:llama3', reliability, env: {} });
    expect(models.agentModel({ model: 'sonnet' })).toBeUndefined();
    expect(models.agentModel({ model: 'ollama:qwen' })).toBe('ollama:qwen');
    expect(models.agentModel({})).toBeUndefined();
    expect(createModelCatalog({ model: 'ollama:llama3', reliability, env: { ANTHROPIC_API_KEY: 'key' } }).agentModel({ model: 'sonnet' })).toBe(
      'anthropic:claude-sonnet-4-5',
    );
  });
});

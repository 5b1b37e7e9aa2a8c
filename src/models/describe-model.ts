import { isLanguageModel, type LanguageModelInstance } from './resolve-model.ts';

/**
 * A label for a model that is safe to show and store: the spec itself, or
 * `<provider>:<modelId>` for a model object. The AI SDK's provider names carry an API suffix
 * (`anthropic.messages`, `ollama.chat`); it is dropped so the label reads like a spec.
 * @example describeModel(resolveModel('ollama:llama3.1:8b')) // 'ollama:llama3.1:8b'
 */
export function describeModel(model: string | LanguageModelInstance): string {
  if (!isLanguageModel(model)) return String(model).trim();
  const provider = model.provider.split('.')[0];
  return `${provider}:${model.modelId}`;
}

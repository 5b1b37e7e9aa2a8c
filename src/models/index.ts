export { describeModel } from './describe-model.ts';
export { parseModelSpec, supportedProviders, type ModelProvider, type ModelSpec } from './parse-model-spec.ts';
export {
  defaultOllamaBaseURL,
  isLanguageModel,
  resolveModel,
  type LanguageModelInstance,
  type ResolveModelOptions,
} from './resolve-model.ts';

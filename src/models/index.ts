export { describeModel } from './describe-model.ts';
export { parseModelSpec, supportedProviders, type ModelProvider, type ModelSpec } from './parse-model-spec.ts';
export {
  defaultOllamaBaseURL,
  isLanguageModel,
  resolveModel,
  type LanguageModelInstance,
  type ResolveModelOptions,
} from './resolve-model.ts';
export { ModelCallError, type ModelCallFailure } from './model-call-error.ts';
export { createProviderGates, type ProviderGates, type ProviderGatesOptions, type Sleep } from './provider-gates.ts';
export { composeModel, type ModelCallContext, type ModelMiddleware } from './compose-model.ts';
export { redactModelOutput } from './redact-model-output.ts';
export { reliableCalls, type ReliableCallsOptions } from './reliable-calls.ts';
export { reliableModel, type ReliableModelOptions } from './reliable-model.ts';
export { watchModelText } from './watch-model-text.ts';
export { watchModelUsage } from './watch-model-usage.ts';
export { createSecretRedactor, redactedMarker, type SecretRedactor, type SecretRedactorOptions } from './secret-redactor.ts';

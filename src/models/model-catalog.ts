import type { LanguageModel } from 'ai';
import { defaultModelAliases, resolveAgentModel, resolveModelAlias } from '../config/model-aliases.ts';
import { describeModel } from './describe-model.ts';
import { reliableModel, type ReliableModelOptions } from './reliable-model.ts';
import { resolveModel, type LanguageModelInstance } from './resolve-model.ts';

/** Options of {@link createModelCatalog}. */
export interface ModelCatalogOptions {
  /** The default model: a spec like `anthropic:claude-sonnet-4-5`, or an AI SDK model instance. */
  model: string | LanguageModelInstance;
  /** Short names and what they stand for, laid over {@link defaultModelAliases}. */
  aliases?: Record<string, string>;
  /** Base URL for `openai-compatible:` specs. */
  baseURL?: string | undefined;
  /** Environment for API keys. @default process.env */
  env?: Record<string, string | undefined>;
  /** The retry policy every model of the catalog goes through. */
  reliability: ReliableModelOptions;
}

/**
 * The models of a runtime: each spec resolved once and wrapped in the one retry policy (with one
 * 429 gate per provider), aliases resolved, and an agent's own model when it can be had here.
 */
export interface ModelCatalog {
  /** The default model's label (`provider:model-id`, or what an instance describes itself as). */
  readonly defaultLabel: string;
  /** The model a spec or alias names; the default model for none (or the default's label). */
  modelFor(name: string | undefined): LanguageModel;
  /** The spec an alias or opencode name stands for. */
  specOf(name: string): string;
  /**
   * The spec of an agent's own model, or undefined when it names none or it cannot be had here
   * (no key for its provider): the session's model then (`cadre agents` says why).
   */
  agentModel(agent: { model?: string } | undefined): string | undefined;
}

/** Creates the {@link ModelCatalog} of a runtime. */
export function createModelCatalog(options: ModelCatalogOptions): ModelCatalog {
  const aliases = { ...defaultModelAliases, ...options.aliases };
  const specOf = (name: string) => resolveModelAlias(name, aliases);
  const defaultLabel = typeof options.model === 'string' ? specOf(describeModel(options.model)) : describeModel(options.model);
  const models = new Map<string, LanguageModel>();
  let defaultModel: LanguageModel | undefined;
  const reliable = (model: LanguageModelInstance) => reliableModel(model, options.reliability);

  return {
    defaultLabel,
    specOf,
    modelFor(name) {
      let spec = name === undefined ? undefined : specOf(name);
      if (spec === undefined || spec === defaultLabel) {
        if (typeof options.model !== 'string') return (defaultModel ??= reliable(options.model));
        spec = specOf(options.model);
      }
      let model = models.get(spec);
      if (!model) {
        model = reliable(resolveModel(spec, { baseURL: options.baseURL, env: options.env }));
        models.set(spec, model);
      }
      return model;
    },
    agentModel(agent) {
      return agent?.model === undefined ? undefined : (resolveAgentModel(agent.model, { aliases, env: options.env }).spec ?? undefined);
    },
  };
}

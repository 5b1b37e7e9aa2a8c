import { supportedProviders } from '../models/parse-model-spec.ts';

/**
 * Short model names and what they stand for, used when `modelAliases` in the configuration does
 * not say otherwise: the names Claude Code agent files use.
 */
export const defaultModelAliases: Readonly<Record<string, string>> = Object.freeze({
  sonnet: 'anthropic:claude-sonnet-4-5',
  opus: 'anthropic:claude-opus-4-5',
  haiku: 'anthropic:claude-haiku-4-5',
});

/**
 * The model spec `provider:model-id` a name in an agent file or the configuration stands for:
 * an alias of `aliases` (like `sonnet`), opencode's `provider/model-id` (as `provider:model-id`
 * unless an alias names it), or the spec itself. Unknown short names come back unchanged, so
 * resolving the model reports them.
 * @example resolveModelAlias('anthropic/claude-sonnet-4-5', {}) // 'anthropic:claude-sonnet-4-5'
 */
export function resolveModelAlias(name: string, aliases: Readonly<Record<string, string>> = defaultModelAliases): string {
  let spec = name;
  // An alias may name another alias; the bound stops a loop.
  for (let hop = 0; hop < 8 && Object.hasOwn(aliases, spec); hop++) spec = aliases[spec];
  const opencode = /^([a-z][a-z0-9-]*)\/(\S+)$/.exec(spec);
  return opencode && !spec.includes(':') ? `${opencode[1]}:${opencode[2]}` : spec;
}

/** How an agent's `model` resolves: the spec to use, or the session's model and why. */
export type AgentModelResolution = { spec: string; fallback?: undefined } | { spec: null; fallback: string };

/** Where {@link resolveAgentModel} looks. */
export interface ResolveAgentModelOptions {
  /** The configuration's `modelAliases`, defaults included. @default defaultModelAliases */
  aliases?: Readonly<Record<string, string>>;
  /** The environment, for the providers' keys. @default process.env */
  env?: Record<string, string | undefined>;
}

/** The variable holding each provider's key; providers without one need none. */
const providerKeys: Readonly<Record<string, string>> = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' };

/**
 * The model an agent file's `model` stands for, in this order: a name `modelAliases` in the
 * configuration maps; a cadre spec `provider:model-id` as written; a Claude tier (`sonnet`,
 * `opus`, `haiku`) or id (`claude-opus-4-1`) or opencode's `provider/model-id`, where that
 * provider is supported and its key is set; otherwise the session's model (`spec: null`), with
 * `fallback` saying why. So an agent written for Claude Code runs on any session's model.
 * @example resolveAgentModel('sonnet', { env: {} }) // { spec: null, fallback: "'sonnet' needs ANTHROPIC_API_KEY, which is not set" }
 */
export function resolveAgentModel(name: string, options: ResolveAgentModelOptions = {}): AgentModelResolution {
  const { aliases = defaultModelAliases, env = process.env } = options;
  const configured = Object.hasOwn(aliases, name) && aliases[name] !== defaultModelAliases[name];
  if (configured || /^[a-z][a-z0-9-]*:\S+$/.test(name)) return { spec: resolveModelAlias(name, aliases) };
  const candidate = Object.hasOwn(defaultModelAliases, name)
    ? defaultModelAliases[name]
    : /^claude-[a-z0-9.-]+$/i.test(name)
      ? `anthropic:${name}`
      : /^[a-z][a-z0-9-]*\/\S+$/.test(name)
        ? resolveModelAlias(name, {})
        : null;
  if (candidate === null) return { spec: null, fallback: `'${name}' is no model cadre knows (map it in modelAliases of cadre.config.json)` };
  const provider = candidate.slice(0, candidate.indexOf(':'));
  if (!(supportedProviders as readonly string[]).includes(provider)) {
    return { spec: null, fallback: `'${name}' names provider '${provider}', which cadre does not support (${supportedProviders.join(', ')})` };
  }
  const variable = providerKeys[provider];
  if (variable !== undefined && !env[variable]?.trim()) return { spec: null, fallback: `'${name}' needs ${variable}, which is not set` };
  return { spec: candidate };
}

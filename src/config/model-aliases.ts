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

import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
import { parsePermissionRule } from '../permissions/permission-rule.ts';
import { permissionsConfigSchema, type PermissionsConfig } from '../permissions/permissions.ts';

/**
 * Where an agent may run: `primary` only as the agent a person talks to, `subagent` only
 * through delegation, `all` both.
 */
export type AgentMode = 'primary' | 'subagent' | 'all';

/** The accepted values of {@link AgentMode}, in the order shown in messages. */
export const agentModes = ['primary', 'subagent', 'all'] as const satisfies readonly AgentMode[];

/** A named agent: system prompt, description, model, tools and turn cap. */
export interface AgentDefinition {
  /** Unique name matching {@link agentNamePattern}; the `agent` tool refers to it. */
  name: string;
  /** One line the parent model reads to decide when to delegate to this agent. */
  description: string;
  /**
   * Model spec `provider:model-id`, or a name `modelAliases` resolves when the model is made
   * (`sonnet`, opencode's `provider/model-id`); when absent (or `inherit` in a file) the session's model is used.
   */
  model?: string;
  /** Allow-list of tool names; when absent, only the tools the runtime adds itself. */
  tools?: string[];
  /** Turn cap; when absent `limits.defaultMaxTurns` applies. */
  maxTurns?: number;
  /** Where the agent may run. @default 'all' */
  mode: AgentMode;
  /** Permission rules of this agent; they can only make a tool call stricter. @default none */
  permissions?: PermissionsConfig;
  /** The system prompt: the markdown body of the file, trimmed. */
  system: string;
  /** Where the definition came from: a file path, `'built-in'` or `'code'`. */
  source: string;
  /** What in its file cadre did not use, one line each: unknown keys, tools with no cadre equivalent. */
  warnings?: readonly string[];
  /** Front-matter keys cadre does not know (`color`, `temperature`, ...), kept as written. */
  extra?: Readonly<Record<string, unknown>>;
}

/** Valid agent names: a lowercase letter, then up to 63 lowercase letters, digits, `_` or `-`. */
export const agentNamePattern = /^[a-z][a-z0-9_-]{0,63}$/;

function textOrRequired(requiredHint: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? `required (${requiredHint})` : 'must be text');
}

const nameSchema = z
  .string({ error: textOrRequired('a name like researcher') })
  .regex(agentNamePattern, { error: (issue) => `'${String(issue.input)}' must match [a-z][a-z0-9_-]{0,63}` });

const descriptionSchema = z
  .string({ error: textOrRequired('one line the parent model reads to decide when to delegate to this agent') })
  .trim()
  .min(1, { error: 'must not be empty: say in one line what this agent does' });

const modelSchema = z
  .string({ error: 'must be a model spec like anthropic:claude-sonnet-4-5' })
  .regex(/^([a-z][a-z0-9-]*[:/]\S+|[a-z0-9][a-z0-9._-]*)$/i, {
    error: (issue) => `'${String(issue.input)}' must look like provider:model-id, provider/model-id, or a short name of modelAliases (sonnet)`,
  });

// `inherit` (Claude Code) means the session's model, which is also what no model means.
const fileModelSchema = z.preprocess((value) => (value === 'inherit' ? undefined : value), modelSchema.optional());

const toolsMessage = 'must be a list of tool names, like [read_file, grep]';

// A comma-separated string is accepted too, because other agent formats write tools that way.
const toolsSchema = z.preprocess(
  (value) => (typeof value === 'string' ? value.split(',').map((tool) => tool.trim()).filter(Boolean) : value),
  z.array(z.string({ error: toolsMessage }).min(1, { error: toolsMessage }), { error: toolsMessage }),
);

const toolMapMessage = 'must be a list of tool names, like [read_file, grep], or a map of tool names to true or false';

/** `tools` in a file: a list, a comma-separated string, or opencode's map of names to true or false. */
const fileToolsSchema = z.union([toolsSchema, z.record(z.string(), z.boolean({ error: toolMapMessage }), { error: toolMapMessage })], {
  error: toolMapMessage,
});

const maxTurnsSchema = z
  .int({ error: 'must be a whole number of at least 1' })
  .min(1, { error: 'must be a whole number of at least 1' });

const modeSchema = z.enum(agentModes, {
  error: (issue) => `must be one of ${agentModes.join(', ')}, not '${String(issue.input)}'`,
});

// Each rule is parsed here, so a bad one is reported with the agent's file and the rule.
const permissionsSchema = permissionsConfigSchema.superRefine((value, context) => {
  for (const [decision, rules] of Object.entries(value)) {
    for (const rule of rules ?? []) {
      try {
        parsePermissionRule(rule);
      } catch (error) {
        context.addIssue({ code: 'custom', message: `${decision}: ${(error as Error).message}` });
        return;
      }
    }
  }
});

/**
 * The front matter of an agent file, with its snake_case keys. Keys it does not name (`color`,
 * `temperature`, ...) pass through; the parser keeps them and reports them as warnings.
 */
export const agentFrontMatterSchema = z.looseObject({
  name: nameSchema.optional(),
  description: descriptionSchema,
  model: fileModelSchema,
  tools: fileToolsSchema.optional(),
  max_turns: maxTurnsSchema.optional(),
  mode: modeSchema.default('all'),
  permissions: permissionsSchema.optional(),
});

/** What {@link defineAgent} accepts: an {@link AgentDefinition} without `source`, with defaults. */
export interface AgentInput {
  /** Unique name matching {@link agentNamePattern}. */
  name: string;
  /** One line the parent model reads to decide when to delegate to this agent. */
  description: string;
  /** The system prompt. @default '' */
  system?: string;
  /** Model spec `provider:model-id`. @default the session's model */
  model?: string;
  /** Allow-list of tool names. @default only the tools the runtime adds */
  tools?: string[];
  /** Turn cap. @default limits.defaultMaxTurns */
  maxTurns?: number;
  /** Where the agent may run. @default 'all' */
  mode?: AgentMode;
  /** Permission rules that can only make this agent's tool calls stricter. @default none */
  permissions?: PermissionsConfig;
}

const agentInputSchema = z.strictObject({
  name: nameSchema,
  description: descriptionSchema,
  system: z.string({ error: 'must be a string' }).default(''),
  model: modelSchema.optional(),
  tools: toolsSchema.optional(),
  maxTurns: maxTurnsSchema.optional(),
  mode: modeSchema.default('all'),
  permissions: permissionsSchema.optional(),
});

/** Every problem of a failed validation, one per offending key, in the order of the schema's keys. */
export function describeValidationErrors(error: z.ZodError, allowedKeys: readonly string[]): { field: string | null; message: string }[] {
  const problems: { field: string | null; message: string }[] = [];
  for (const issue of error.issues) {
    const field = issue.path.length > 0 ? String(issue.path[0]) : null;
    if (issue.code === 'unrecognized_keys' || problems.some((problem) => problem.field === field)) continue;
    problems.push({ field, message: issue.message });
  }
  const rank = (field: string | null) => (field === null ? -1 : allowedKeys.indexOf(field));
  return problems.sort((left, right) => rank(left.field) - rank(right.field));
}

/** The first problem of a failed validation, as the offending key and a one-line message. */
export function describeValidationError(error: z.ZodError, allowedKeys: readonly string[]) {
  // An unknown key is usually a misspelling, which explains the other errors too.
  const issue = error.issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    const normalized = key.toLowerCase().replace(/[-_]/g, '');
    const suggestion = allowedKeys.find((allowed) => allowed.toLowerCase().replace(/_/g, '') === normalized);
    const hint = suggestion ? `did you mean ${suggestion}?` : `allowed keys: ${allowedKeys.join(', ')}`;
    return { field: key, message: `unknown key (${hint})` };
  }
  return { field: issue.path.length > 0 ? String(issue.path[0]) : null, message: issue.message };
}

/**
 * Validates an agent registered in code, the same way as an agent file.
 * @throws {ConfigError} naming the agent and the offending field.
 * @example defineAgent({ name: 'reviewer', description: 'Reviews a diff.', system: 'You review diffs.' })
 */
export function defineAgent(input: AgentInput): AgentDefinition {
  const result = agentInputSchema.safeParse(input);
  if (!result.success) {
    const label = typeof input?.name === 'string' ? `Agent '${input.name}'` : 'Agent';
    const { field, message } = describeValidationError(result.error, Object.keys(agentInputSchema.shape));
    throw new ConfigError(`${label}: ${field === null ? '' : `${field}: `}${message}`);
  }
  const { name, description, system, model, tools, maxTurns, mode, permissions } = result.data;
  return { name, description, system: system.trim(), model, tools, maxTurns, mode, ...(permissions && { permissions }), source: 'code' };
}

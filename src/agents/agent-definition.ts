import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
import { toOutputSchema } from '../output/to-output-schema.ts';
import { parsePermissionRule } from '../permissions/permission-rule.ts';
import { permissionsConfigSchema, type PermissionsConfig } from '../permissions/permissions.ts';
import { allTools, type ToolSelection } from './tool-selection.ts';

/**
 * Where an agent may run: `primary` only as the agent a person talks to, `subagent` only
 * through delegation, `all` both.
 */
export type AgentMode = 'primary' | 'subagent' | 'all';

/** The accepted values of {@link AgentMode}, in the order shown in messages. */
export const agentModes = ['primary', 'subagent', 'all'] as const satisfies readonly AgentMode[];

/**
 * Claude Code's `permissionMode`. Only `plan` (read tools only) is applied: the others would widen
 * what the agent may do, which an agent file may never do, so they are kept and shown as not applied.
 */
export type AgentPermissionMode = 'default' | 'plan' | 'acceptEdits' | 'bypassPermissions' | 'dontAsk';

/** The accepted values of {@link AgentPermissionMode}. */
export const agentPermissionModes = ['default', 'plan', 'acceptEdits', 'bypassPermissions', 'dontAsk'] as const satisfies readonly AgentPermissionMode[];

/** The agent programs that can carry an agent's runs out (`harness:`, docs/harnesses.md). */
export type HarnessName = 'claude-code' | 'codex' | 'opencode';

/** The accepted values of {@link HarnessName}, in the order shown in messages. */
export const harnessNames = ['claude-code', 'codex', 'opencode'] as const satisfies readonly HarnessName[];

/**
 * One entry of Claude Code's `mcpServers`: the name of a server configured elsewhere, or a server
 * defined inline (its configuration as written). Kept as data for the MCP client.
 */
export interface AgentMcpServer {
  name: string;
  /** The inline definition (`command`, `args`, `url`, ...), when the file gives one. */
  config?: Readonly<Record<string, unknown>>;
}

/** A named agent: system prompt, description, model, tools and turn cap. */
export interface AgentDefinition {
  /** Unique id matching {@link agentNamePattern}; the `agent` tool refers to it. */
  name: string;
  /** The name as its file wrote it, when that differs from the id (`Frontend Developer`). */
  displayName?: string;
  /** One line the parent model reads to decide when to delegate to this agent. */
  description: string;
  /**
   * Model as written: a spec `provider:model-id`, a name `modelAliases` resolves, a Claude tier or
   * id (`sonnet`, `claude-opus-4-1`), or opencode's `provider/model-id`; when absent (or `inherit`
   * in a file) the session's model is used. See `resolveAgentModel`.
   */
  model?: string;
  /** Which tools it gets: every tool the runtime has, or those a list names. */
  tools: ToolSelection;
  /** Tool names or patterns taken away from {@link AgentDefinition.tools}. @default none */
  disallowedTools?: readonly string[];
  /** Turn cap; when absent `limits.defaultMaxTurns` applies. */
  maxTurns?: number;
  /** Where the agent may run. @default 'all' */
  mode: AgentMode;
  /** Permission rules of this agent; they can only make a tool call stricter. @default none */
  permissions?: PermissionsConfig;
  /** Claude Code's `permissionMode`; only `plan` applies (read tools only). @default 'default' */
  permissionMode?: AgentPermissionMode;
  /** The colour its runs are shown in (a colour name like `purple`, or `#rrggbb`). */
  color?: string;
  /** Claude Code's `mcpServers`, kept as written for the MCP client. */
  mcpServers?: readonly AgentMcpServer[];
  /** The agent program that carries its runs out instead of cadre's own loop. @default cadre's loop */
  harness?: HarnessName;
  /**
   * The JSON Schema (top level an object) its runs' results must match, unless a call gives its
   * own (docs/structured-output.md). @default free text
   */
  outputSchema?: Readonly<Record<string, unknown>>;
  /** Claude Code's `isolation`: `worktree` gives each run a git worktree of its own (docs/worktrees.md). @default none */
  isolation?: 'worktree';
  /** The system prompt: the markdown body of the file, trimmed. */
  system: string;
  /** Where the definition came from: a file path, `'built-in'` or `'code'`. */
  source: string;
  /** What of its file cadre could not honour (a mode not applied, a model it falls back from), one line each. */
  warnings?: readonly string[];
  /** Front-matter keys cadre does not use (`temperature`, `emoji`, ...), kept as written. */
  extra?: Readonly<Record<string, unknown>>;
}

/** Valid agent ids: a lowercase letter, then up to 63 lowercase letters, digits, `.`, `_` or `-`. */
export const agentNamePattern = /^[a-z][a-z0-9._-]{0,63}$/;

function textOrRequired(requiredHint: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? `required (${requiredHint})` : 'must be text');
}

const nameSchema = z
  .string({ error: textOrRequired('a name like researcher') })
  .regex(agentNamePattern, { error: (issue) => `'${String(issue.input)}' must match [a-z][a-z0-9._-]{0,63}` });

const descriptionSchema = z
  .string({ error: textOrRequired('one line the parent model reads to decide when to delegate to this agent') })
  .trim()
  .min(1, { error: 'must not be empty: say in one line what this agent does' });

const modelSchema = z.string({ error: 'must be a model spec like anthropic:claude-sonnet-4-5' }).regex(/^([a-z][a-z0-9-]*[:/]\S+|[a-z0-9][a-z0-9._-]*)$/i, {
  error: (issue) => `'${String(issue.input)}' must look like provider:model-id, provider/model-id, or a short name of modelAliases (sonnet)`,
});

// `inherit` (Claude Code) means the session's model, which is also what no model means.
// Any other text is kept: resolving it falls back to the session's model with a warning, as an unknown tier does.
const fileModelSchema = z.preprocess(
  (value) => (value === 'inherit' || value === null ? undefined : typeof value === 'number' ? String(value) : value),
  z.string({ error: 'must be a model name like sonnet or anthropic:claude-sonnet-4-5' }).trim().optional(),
);

const toolsMessage = 'must be a list of tool names, like [read_file, grep]';

// A comma-separated string is accepted too, because other agent formats write tools that way.
const toolListSchema = z.preprocess(
  (value) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((tool) => tool.trim())
          .filter(Boolean)
      : value,
  z.array(z.string({ error: toolsMessage }).min(1, { error: toolsMessage }), { error: toolsMessage }),
);

const toolMapMessage = 'must be a list of tool names, like [read_file, grep], or a map of tool names to true or false';

/**
 * `tools` in a file: a list, a comma-separated string, or opencode's map of names to true or
 * false; no value (an empty `tools:` line) means every tool, as no line does.
 */
const fileToolsSchema = z.union([z.null(), toolListSchema, z.record(z.string(), z.boolean({ error: toolMapMessage }), { error: toolMapMessage })], {
  error: toolMapMessage,
});

const maxTurnsSchema = z.int({ error: 'must be a whole number of at least 1' }).min(1, { error: 'must be a whole number of at least 1' });

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

const colorSchema = z.union([z.string(), z.number()], { error: 'must be a colour name like purple, or #rrggbb' }).transform(String);

/** Claude Code's `mcpServers`: a list of server names or `{ name: config }` entries, or one such map. */
const mcpServersSchema = z
  .union([z.array(z.union([z.string(), z.record(z.string(), z.unknown())])), z.record(z.string(), z.unknown())], {
    error: 'must be a list of MCP server names, or of { name: configuration } entries',
  })
  .transform((value): AgentMcpServer[] =>
    (Array.isArray(value) ? value : [value]).flatMap((entry) =>
      typeof entry === 'string'
        ? [{ name: entry }]
        : Object.entries(entry).map(([name, config]) =>
            typeof config === 'object' && config !== null ? { name, config: config as Record<string, unknown> } : { name },
          ),
    ),
  );

/**
 * The front matter of an agent file, with its snake_case keys (Claude Code's camelCase ones are
 * renamed before: `maxTurns`, `disallowedTools`, `permissionMode`, `mcpServers`). Keys it does not
 * name (`temperature`, `emoji`, ...) pass through; the parser keeps them in `extra`.
 */
export const agentFrontMatterSchema = z.looseObject({
  name: z.union([z.string(), z.number()], { error: 'must be text' }).transform(String).optional(),
  description: descriptionSchema,
  model: fileModelSchema,
  tools: fileToolsSchema.optional(),
  disallowed_tools: toolListSchema.optional(),
  max_turns: maxTurnsSchema.optional(),
  mode: modeSchema.default('all'),
  permissions: permissionsSchema.optional(),
  permission_mode: z.string({ error: `must be one of ${agentPermissionModes.join(', ')}` }).optional(),
  color: colorSchema.optional(),
  mcp_servers: mcpServersSchema.optional(),
  harness: z.enum(harnessNames, { error: (issue) => `must be one of ${harnessNames.join(', ')}, not '${String(issue.input)}'` }).optional(),
  output_schema: z.unknown().optional(),
  isolation: z.literal('worktree', { error: "must be 'worktree' (a git worktree of its own for each run)" }).optional(),
});

/** What {@link defineAgent} accepts: an {@link AgentDefinition} without `source`, with defaults. */
export interface AgentInput {
  /** Unique id matching {@link agentNamePattern}. */
  name: string;
  /** A name to show instead of the id. @default the id */
  displayName?: string;
  /** One line the parent model reads to decide when to delegate to this agent. */
  description: string;
  /** The system prompt. @default '' */
  system?: string;
  /** Model spec `provider:model-id`, or a name `modelAliases` resolves. @default the session's model */
  model?: string;
  /**
   * The tools it may use: names or patterns (`mcp__github__*`); `[]` for none.
   * @default every tool the runtime has
   */
  tools?: string[];
  /** Tool names or patterns taken away from `tools`. @default none */
  disallowedTools?: string[];
  /** Turn cap. @default limits.defaultMaxTurns */
  maxTurns?: number;
  /** Where the agent may run. @default 'all' */
  mode?: AgentMode;
  /** Permission rules that can only make this agent's tool calls stricter. @default none */
  permissions?: PermissionsConfig;
  /** `plan` keeps only the read tools. @default 'default' */
  permissionMode?: 'default' | 'plan';
  /** The colour its runs are shown in. @default none */
  color?: string;
  /** MCP servers it uses, for the MCP client. @default none */
  mcpServers?: AgentMcpServer[];
  /** The agent program that carries its runs out (docs/harnesses.md). @default cadre's own loop */
  harness?: HarnessName;
  /**
   * The shape of its runs' results: a JSON Schema whose top level is an object, or a zod 4
   * schema (converted with `z.toJSONSchema`). A call's `output_schema` wins. @default free text
   * @example outputSchema: z.object({ title: z.string(), tags: z.array(z.string()) })
   */
  outputSchema?: Record<string, unknown> | z.ZodType;
  /** `worktree`: each run works in a git worktree of its own (docs/worktrees.md). @default none */
  isolation?: 'worktree';
}

const agentInputSchema = z.strictObject({
  name: nameSchema,
  displayName: z.string({ error: 'must be text' }).optional(),
  description: descriptionSchema,
  system: z.string({ error: 'must be a string' }).default(''),
  model: modelSchema.optional(),
  tools: toolListSchema.optional(),
  disallowedTools: toolListSchema.optional(),
  maxTurns: maxTurnsSchema.optional(),
  mode: modeSchema.default('all'),
  permissions: permissionsSchema.optional(),
  permissionMode: z.enum(['default', 'plan'], { error: "must be 'default' or 'plan' (an agent can only narrow its permissions)" }).optional(),
  color: z.string({ error: 'must be a colour name like purple, or #rrggbb' }).optional(),
  mcpServers: z
    .array(z.strictObject({ name: z.string({ error: 'must be text' }), config: z.record(z.string(), z.unknown()).optional() }), {
      error: 'must be a list of { name, config? }',
    })
    .optional(),
  harness: z.enum(harnessNames, { error: `must be one of ${harnessNames.join(', ')}` }).optional(),
  outputSchema: z.unknown().optional(),
  isolation: z.literal('worktree', { error: "must be 'worktree'" }).optional(),
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
  const { tools, system, permissions, outputSchema, ...rest } = result.data;
  const label = `Agent '${result.data.name}'`;
  const definition: AgentDefinition = {
    ...withoutUndefined(rest),
    ...(outputSchema !== undefined && { outputSchema: outputSchemaOf(outputSchema, (message) => new ConfigError(`${label}: outputSchema: ${message}`)) }),
    tools: tools === undefined ? allTools : { kind: 'list', names: tools },
    system: system.trim(),
    source: 'code',
  };
  if (permissions) definition.permissions = permissions;
  return definition;
}

/**
 * An agent's output schema from what it was given (JSON Schema, or zod in code), or the error
 * `fail` makes of what is wrong with it.
 */
export function outputSchemaOf(given: unknown, fail: (message: string) => Error): Record<string, unknown> {
  try {
    return toOutputSchema(given);
  } catch (error) {
    throw fail((error as Error).message);
  }
}

/** The object without its keys whose value is undefined, so definitions compare and print cleanly. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}

import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
import { limitsSchema, unknownLimitMessage } from './limits.ts';
import { permissionsConfigSchema } from '../permissions/permissions.ts';
import { sandboxConfigSchema } from './sandbox-config.ts';
import { mcpServersSchema } from './mcp-servers-config.ts';

const text = (what: string) =>
  z
    .string({ error: `must be ${what}` })
    .trim()
    .min(1, { error: `must be ${what}` });

/** `cadre.config.json` as written; relative paths in it are not resolved yet. */
export const configFileSchema = z.strictObject({
  // Editors add a `$schema` key for completion; it means nothing to cadre.
  $schema: z.string().optional(),
  model: text('a model spec like anthropic:claude-sonnet-4-5').optional(),
  baseURL: text('a URL like http://localhost:8000/v1')
    .refine((value) => URL.canParse(value), { error: 'must be a URL like http://localhost:8000/v1' })
    .optional(),
  db: text('a file path or a postgres:// URL').optional(),
  queue: text('a redis:// URL')
    .refine((value) => /^rediss?:\/\//i.test(value), { error: 'must be a redis:// URL like redis://127.0.0.1:6379' })
    .optional(),
  agents: z.array(text('a directory path'), { error: 'must be a list of directory paths' }).optional(),
  limits: limitsSchema.optional(),
  modelAliases: z
    .record(z.string(), text('a model spec like anthropic:claude-sonnet-4-5'), {
      error: 'must map short names to model specs, like { "sonnet": "anthropic:claude-sonnet-4-5" }',
    })
    .optional(),
  permissions: permissionsConfigSchema.optional(),
  sandbox: sandboxConfigSchema.optional(),
  mcpServers: mcpServersSchema.optional(),
  // Agent programs that carry runs out (docs/harnesses.md): where each program is. Needs trust (it starts programs).
  harnesses: z
    .partialRecord(
      z.enum(['claude-code', 'codex', 'opencode'], { error: 'must be claude-code, codex or opencode' }),
      z.strictObject({ command: text('the path of the program, like /usr/local/bin/claude') }, { error: 'must be { "command": "/path/to/program" }' }),
      { error: 'must map claude-code, codex or opencode to { "command": "/path/to/program" }' },
    )
    .optional(),
  summarize: z
    .strictObject({
      model: text('a model spec like anthropic:claude-haiku-4-5').optional(),
      enabled: z.boolean({ error: 'must be true or false' }).optional(),
      maxChars: z
        .int({ error: 'must be a whole number of characters, 200 or more' })
        .min(200, { error: 'must be a whole number of characters, 200 or more' })
        .optional(),
      timeoutMs: z
        .int({ error: 'must be a whole number of milliseconds, 1 or more' })
        .positive({ error: 'must be a whole number of milliseconds, 1 or more' })
        .optional(),
    })
    .optional(),
  telemetry: z
    .strictObject({
      enabled: z.boolean({ error: 'must be true or false' }).optional(),
      endpoint: z.url({ error: 'must be a URL like http://localhost:4318' }).optional(),
      protocol: z.enum(['http/json', 'http/protobuf'], { error: "must be 'http/json' or 'http/protobuf'" }).optional(),
      recordContent: z.boolean({ error: 'must be true or false' }).optional(),
    })
    .optional(),
  worktree: z
    .strictObject({
      baseRef: text('a commit, branch or tag like HEAD or main').optional(),
    })
    .optional(),
});

/** The contents of a valid `cadre.config.json`. */
export type ConfigFile = z.infer<typeof configFileSchema>;

function unknownKeyMessage(parent: string, key: string) {
  // Keys must not sit in a file that gets committed, so this one gets its own explanation.
  if (parent === '' && key === 'apiKey') {
    return 'is not read from files on purpose, because config files get committed: ' + 'set CADRE_API_KEY or the provider key variable';
  }
  if (parent === 'limits') return unknownLimitMessage;
  if (parent === 'permissions') return 'unknown key (known keys: allow, ask, deny)';
  if (parent === 'sandbox') return 'unknown key (known keys: mode, network, writable)';
  if (parent === 'harnesses') return 'unknown agent program (known: claude-code, codex, opencode)';
  if (parent === 'telemetry') return 'unknown key (known keys: enabled, endpoint, protocol, recordContent)';
  if (parent === 'worktree') return 'unknown key (known keys: baseRef)';
  const allowed =
    parent === 'summarize'
      ? 'model, enabled, maxChars, timeoutMs'
      : 'model, baseURL, db, queue, agents, limits, permissions, sandbox, mcpServers, summarize, modelAliases, telemetry, worktree';
  return `unknown key (known keys: ${allowed})`;
}

function describeIssue(issue: z.core.$ZodIssue) {
  const parent = issue.path.join('.');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    return `${parent === '' ? key : `${parent}.${key}`}: ${unknownKeyMessage(parent, key)}`;
  }
  return `${parent}: ${issue.message}`;
}

/**
 * Reads and validates a config file.
 * @returns null when the file does not exist.
 * @throws {ConfigError} naming the file and the field for invalid JSON, unknown keys or bad values.
 */
export async function readConfigFile(path: string): Promise<ConfigFile | null> {
  let contents: string;
  try {
    contents = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return null;
    throw new ConfigError(`${path}: cannot read the config file: ${(error as Error).message}`, { cause: error });
  }
  let data: unknown;
  try {
    data = JSON.parse(contents);
  } catch (error) {
    // V8 quotes the start of the text in some messages, and that text may hold a key.
    const reason = (error as Error).message.replace(/, "[\s\S]*" is not valid JSON$/, ' is not valid JSON');
    throw new ConfigError(`${path}: invalid JSON: ${reason}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ConfigError(`${path}: must hold a JSON object, like { "model": "anthropic:claude-sonnet-4-5" }`);
  }
  const result = configFileSchema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? result.error.issues[0];
    throw new ConfigError(`${path}: ${describeIssue(issue)}`);
  }
  return result.data;
}

import { basename } from 'node:path';
import {
  agentFrontMatterSchema,
  agentPermissionModes,
  describeValidationErrors,
  outputSchemaOf,
  type AgentDefinition,
  type AgentPermissionMode,
} from './agent-definition.ts';
import { agentIdFromName } from './agent-id.ts';
import { mapAgentToolNames } from './agent-tool-names.ts';
import { isCadrePermissions, opencodePermissionRules } from './opencode-permission.ts';
import { allTools, type ToolSelection } from './tool-selection.ts';
import { readFrontMatter } from './read-front-matter.ts';

/** Why one agent file (or directory) did not load. */
export interface AgentLoadError {
  /** The file or directory that failed. */
  path: string;
  /** The first offending front-matter key, like `description`; null when the file as a whole is wrong. */
  field: string | null;
  /** Every problem of the file, one per offending key. */
  problems: { field: string | null; message: string }[];
  /**
   * One line that starts with the path and names every problem, e.g.
   * `/x/.cadre/agents/bad.md: description: required (...); max_turns: must be a whole number of at least 1`.
   */
  message: string;
}

/** The outcome of {@link parseAgentFile}: the agent, or why it did not load. */
export type ParseAgentFileResult = { ok: true; agent: AgentDefinition } | { ok: false; error: AgentLoadError };

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
const problemText = ({ field, message }: { field: string | null; message: string }) => `${field === null ? '' : `${field}: `}${oneLine(message)}`;

/** Builds an {@link AgentLoadError} whose message is one line naming the path and the field. */
export function agentLoadError(path: string, field: string | null, detail: string): AgentLoadError {
  return agentLoadErrors(path, [{ field, message: detail }]);
}

/** Builds an {@link AgentLoadError} for several problems of one file, all named on one line. */
export function agentLoadErrors(path: string, problems: { field: string | null; message: string }[]): AgentLoadError {
  const cleaned = problems.map((problem) => ({ field: problem.field, message: oneLine(problem.message) }));
  return { path, field: cleaned[0]?.field ?? null, problems: cleaned, message: `${path}: ${cleaned.map(problemText).join('; ')}` };
}

const knownKeys = Object.keys(agentFrontMatterSchema.shape);

/** Claude Code's and opencode's spellings of cadre's keys. */
const keyAliases: Readonly<Record<string, string>> = {
  maxTurns: 'max_turns',
  maxSteps: 'max_turns',
  disallowedTools: 'disallowed_tools',
  permissionMode: 'permission_mode',
  mcpServers: 'mcp_servers',
  outputSchema: 'output_schema',
};

/** How a person grants what a widening `permissionMode` would have granted. */
const wideningModes: Readonly<Record<string, string>> = {
  acceptEdits:
    'to let it edit without asking, run with --allow write_file --allow edit_file, or add "allow": ["write"] under "permissions" in cadre.config.json',
  bypassPermissions: 'to let it run without asking, run with --yes, or add "allow" rules under "permissions" in cadre.config.json',
  dontAsk: 'calls no rule allows ask a person; add "allow" rules under "permissions" in cadre.config.json to run them without asking',
};

/** Whether the YAML key holds nothing (`tools:` with no value, or an empty string). */
function isBlank(value: unknown): boolean {
  return value === null || (typeof value === 'string' && value.trim() === '');
}

/**
 * The front matter with Claude Code's and opencode's keys renamed to cadre's (`maxTurns` is
 * `max_turns`, opencode's `permission` map becomes `permissions` rules), and what could not be read.
 */
function normalizeKeys(data: Record<string, unknown>): { data: Record<string, unknown>; warnings: string[] } {
  const normalized: Record<string, unknown> = {};
  const warnings: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    const target = keyAliases[key] ?? key;
    if (Object.hasOwn(normalized, target) && target !== key) continue;
    normalized[target] = value;
  }
  if (isBlank(normalized.tools)) normalized.tools = null;
  // opencode writes `permission` (and some collections `permissions`) as a map of tools to decisions.
  const opencode = 'permission' in normalized && !('permissions' in normalized) ? normalized.permission : normalized.permissions;
  if (typeof opencode === 'object' && opencode !== null && !Array.isArray(opencode) && !isCadrePermissions(opencode)) {
    const { permissions, skipped } = opencodePermissionRules(opencode as Record<string, unknown>);
    normalized.permissions = permissions;
    delete normalized.permission;
    if (skipped.length > 0) warnings.push(`permission: ${skipped.join(', ')} not applied (no decision allow, ask or deny)`);
  }
  return { data: normalized, warnings };
}

/** The agent's tools: every tool, a list, or opencode's map (all, minus the tools turned off). */
function toolSelection(tools: string[] | Record<string, boolean> | null | undefined): { tools: ToolSelection; off: string[] } {
  if (tools === null || tools === undefined) return { tools: allTools, off: [] };
  if (Array.isArray(tools)) return { tools: { kind: 'list', names: mapAgentToolNames(tools) }, off: [] };
  const off = Object.keys(tools).filter((name) => tools[name] === false);
  // `"*": false` turns everything off: then the tools turned on are the list.
  if (off.includes('*')) return { tools: { kind: 'list', names: mapAgentToolNames(Object.keys(tools).filter((name) => tools[name])) }, off: [] };
  return { tools: allTools, off };
}

/** The agent's permission mode and, for one an agent file cannot apply, the warning that says so. */
function permissionModeOf(value: string | undefined): { mode?: AgentPermissionMode; warning?: string } {
  if (value === undefined) return {};
  if (!(agentPermissionModes as readonly string[]).includes(value)) {
    return { warning: `permissionMode: '${value}' is no permission mode (${agentPermissionModes.join(', ')}); ignored` };
  }
  const mode = value as AgentPermissionMode;
  if (!Object.hasOwn(wideningModes, mode)) return { mode };
  return { mode, warning: `permissionMode: ${mode} not applied (an agent file can only narrow what it may do): ${wideningModes[mode]}` };
}

type SplitFile = { error: string } | { frontMatter: string; body: string };

function splitFrontMatter(text: string): SplitFile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0].trimEnd() !== '---') return { error: "missing front matter: start the file with a '---' line" };
  const end = lines.findIndex((line, index) => index > 0 && line.trimEnd() === '---');
  if (end === -1) return { error: "front matter is not closed: add a '---' line after it" };
  return { frontMatter: lines.slice(1, end).join('\n'), body: lines.slice(end + 1).join('\n') };
}

/** How {@link parseAgentFile} reads a file. */
export interface ParseAgentFileOptions {
  /**
   * An opencode file (`.opencode/agent/`): the file name is the id, as in opencode, and a `name`
   * key only the name shown. @default false
   */
  opencode?: boolean;
}

/**
 * Parses an agent file: YAML front matter between `---` lines, then the system prompt. Files
 * written for Claude Code and opencode load as they are (see docs/agents.md).
 * Never throws: a broken file comes back as an {@link AgentLoadError}.
 * @param path the file's path; it names the agent when the front matter has no `name`.
 * @param text the file's contents.
 */
export function parseAgentFile(path: string, text: string, options: ParseAgentFileOptions = {}): ParseAgentFileResult {
  const parts = splitFrontMatter(text);
  if ('error' in parts) return { ok: false, error: agentLoadError(path, null, parts.error) };

  const frontMatter = readFrontMatter(parts.frontMatter);
  if (!frontMatter.ok) return { ok: false, error: agentLoadError(path, null, frontMatter.error) };
  if (typeof frontMatter.data !== 'object' || frontMatter.data === null || Array.isArray(frontMatter.data)) {
    return { ok: false, error: agentLoadError(path, null, 'front matter must be YAML keys and values') };
  }
  const { data, warnings: keyWarnings } = normalizeKeys(frontMatter.data as Record<string, unknown>);

  const fileName = basename(path).replace(/\.md$/i, '');
  const result = agentFrontMatterSchema.safeParse(data);
  const written = result.success ? result.data.name : typeof data.name === 'string' ? data.name : undefined;
  const idSource = options.opencode || written === undefined ? fileName : written;
  const id = agentIdFromName(idSource);
  const nameProblem = {
    field: 'name',
    message:
      idSource === fileName
        ? `the file name '${fileName}' makes no agent name (it needs a letter): rename the file or set name`
        : `'${idSource}' makes no agent name (it needs a letter)`,
  };
  if (!result.success) {
    const problems = describeValidationErrors(result.error, knownKeys);
    return { ok: false, error: agentLoadErrors(path, id === null ? [nameProblem, ...problems] : problems) };
  }
  if (id === null) return { ok: false, error: agentLoadErrors(path, [nameProblem]) };

  const {
    name,
    description,
    model,
    tools,
    disallowed_tools,
    max_turns: maxTurns,
    mode,
    permissions,
    permission_mode,
    color,
    mcp_servers,
    harness,
    output_schema,
    isolation,
    ...unknown
  } = result.data;
  let outputSchema: Record<string, unknown> | undefined;
  if (output_schema !== undefined && output_schema !== null) {
    try {
      outputSchema = outputSchemaOf(output_schema, (message) => new Error(message));
    } catch (error) {
      return { ok: false, error: agentLoadErrors(path, [{ field: 'output_schema', message: (error as Error).message }]) };
    }
  }
  const selection = toolSelection(tools);
  const disallowed = mapAgentToolNames([...(disallowed_tools ?? []), ...selection.off]);
  const permissionMode = permissionModeOf(permission_mode);
  const displayName = name !== undefined && name !== id ? name : undefined;
  const warnings = [...keyWarnings, ...(permissionMode.warning === undefined ? [] : [permissionMode.warning])];
  const agent: AgentDefinition = {
    name: id,
    ...(displayName !== undefined && { displayName }),
    description,
    ...(model !== undefined && { model }),
    tools: selection.tools,
    ...(disallowed.length > 0 && { disallowedTools: disallowed }),
    ...(maxTurns !== undefined && { maxTurns }),
    mode,
    ...(permissions && { permissions }),
    ...(permissionMode.mode !== undefined && { permissionMode: permissionMode.mode }),
    ...(color !== undefined && { color }),
    ...(mcp_servers !== undefined && { mcpServers: mcp_servers }),
    ...(harness !== undefined && { harness }),
    ...(outputSchema !== undefined && { outputSchema }),
    ...(isolation !== undefined && { isolation }),
    system: parts.body.trim(),
    source: path,
    ...(warnings.length > 0 && { warnings }),
    ...(Object.keys(unknown).length > 0 && { extra: unknown }),
  };
  return { ok: true, agent };
}

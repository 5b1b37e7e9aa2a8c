import type { ToolSet } from 'ai';
import { toolInfo } from '../tools/define-tool.ts';

/**
 * Which tools an agent gets, as data: resolved against the tools the runtime actually has each
 * time a run starts ({@link selectAgentTools}), so tools added later (MCP servers) need no change
 * to the agent. A name is a tool name (`read_file`, `mcp__github__create_issue`) or a pattern:
 * a trailing `*` matches any rest (`mcp__github__*`), and `mcp__server` alone stands for every tool
 * of that server, as in Claude Code.
 * - `all`: every tool the runtime has (no `tools` line, an empty one, or an opencode map);
 * - `list`: the tools `names` match (`tools: []` is a list of none).
 */
export type ToolSelection = { kind: 'all' } | { kind: 'list'; names: readonly string[] };

/** Every tool the runtime has: what an agent without a `tools` line gets. */
export const allTools: ToolSelection = Object.freeze({ kind: 'all' });

/** What an agent asks of the runtime's tools; the part of an `AgentDefinition` {@link selectAgentTools} reads. */
export interface AgentToolRequest {
  /** The tools it may use. */
  tools: ToolSelection;
  /** Names or patterns taken away from `tools` (Claude Code's `disallowedTools`, opencode's `false`). @default none */
  disallowedTools?: readonly string[];
  /** `plan` keeps only the tools whose risk is `read`. @default 'default' */
  permissionMode?: string;
}

/** The tools an agent gets in one runtime, and what it asked for that the runtime lacks. */
export interface SelectedTools {
  /** The tools it gets, by name, in the runtime's order. */
  tools: ToolSet;
  /** The names of `tools`. */
  names: string[];
  /** Listed names and patterns that match no tool of the runtime, in the agent's order: it runs without them. */
  missing: string[];
  /** Tools taken away because `permissionMode: plan` keeps the read tools only. */
  narrowed: string[];
}

/**
 * Whether `pattern` (a tool name, `prefix*`, or `mcp__server`) names the tool `name`.
 * @example toolPatternMatches('mcp__github__*', 'mcp__github__create_issue') // true
 */
export function toolPatternMatches(pattern: string, name: string): boolean {
  if (pattern === name) return true;
  if (pattern.endsWith('*')) return name.startsWith(pattern.slice(0, -1));
  // `mcp__server` (no tool part) stands for every tool of that server.
  const server = pattern.startsWith('mcp__') ? pattern.slice(5) : '';
  return server !== '' && !server.includes('__') && name.startsWith(`${pattern}__`);
}

/**
 * Tools an agent gets only by naming them exactly in its `tools` list (no `tools` line, `all` or a
 * pattern never gives them): `workflow` starts many runs from one call, so it is asked for, not
 * inherited. The runtime adds them beside the delegation tools, so naming one is never `missing`.
 */
export const optInToolNames: readonly string[] = Object.freeze(['workflow']);

/**
 * Whether `agent` asks for the opt-in tool `name` (see {@link optInToolNames}): its `tools` list
 * names it exactly and `disallowedTools` does not take it away.
 * @example listsOptInTool({ tools: { kind: 'list', names: ['read_file', 'workflow'] } }, 'workflow') // true
 */
export function listsOptInTool(agent: AgentToolRequest, name: string): boolean {
  return agent.tools.kind === 'list' && agent.tools.names.includes(name) && !(agent.disallowedTools ?? []).some((pattern) => toolPatternMatches(pattern, name));
}

/** Whether a tool the runtime has is known to only read (made by `defineTool` with risk `read`). */
function readsOnly(tool: object): boolean {
  return toolInfo(tool)?.risk === 'read';
}

/**
 * The tools an agent gets from `available`: every one (`all`) or those its list names, minus
 * `disallowedTools`, minus all but the read tools under `permissionMode: plan`. A listed name the
 * runtime lacks is left out and reported in `missing`; it never fails the agent.
 * @example selectAgentTools({ tools: { kind: 'list', names: ['read_file', 'WebFetch'] } }, tools).missing // ['WebFetch']
 */
export function selectAgentTools(agent: AgentToolRequest, available: ToolSet): SelectedTools {
  const names = Object.keys(available);
  const listed = agent.tools.kind === 'all' ? null : agent.tools.names;
  const missing =
    listed === null ? [] : listed.filter((pattern) => !optInToolNames.includes(pattern) && !names.some((name) => toolPatternMatches(pattern, name)));
  const disallowed = agent.disallowedTools ?? [];
  const chosen = names.filter(
    (name) =>
      (listed === null || listed.some((pattern) => toolPatternMatches(pattern, name))) && !disallowed.some((pattern) => toolPatternMatches(pattern, name)),
  );
  const plan = agent.permissionMode === 'plan';
  const narrowed = plan ? chosen.filter((name) => !readsOnly(available[name])) : [];
  const selected = plan ? chosen.filter((name) => readsOnly(available[name])) : chosen;
  return { tools: Object.fromEntries(selected.map((name) => [name, available[name]])), names: selected, missing, narrowed };
}

import type { ToolSet } from 'ai';
import { resolveAgentModel, type AgentModelResolution } from '../config/model-aliases.ts';
import type { AgentDefinition } from './agent-definition.ts';
import { toolsWithoutEquivalent } from './agent-tool-names.ts';
import { listsOptInTool, optInToolNames, selectAgentTools, type SelectedTools } from './tool-selection.ts';

/** What {@link reportAgent} resolves an agent against: the runtime it would run in. */
export interface ReportAgentOptions {
  /** The runtime's tools. */
  tools: ToolSet;
  /** The configuration's `modelAliases`, defaults included. */
  aliases?: Readonly<Record<string, string>>;
  /** The environment, for the providers' keys. @default process.env */
  env?: Record<string, string | undefined>;
}

/** How an agent would run in a runtime: its tools, its model, and what of its file is not honoured. */
export interface AgentReport {
  agent: AgentDefinition;
  /** The tools it gets, and the listed ones it goes without. */
  tools: Omit<SelectedTools, 'tools'>;
  /** How its `model` resolves; null when it names none (the session's model). */
  model: AgentModelResolution | null;
  /**
   * Everything of its file cadre does not honour (tools it lacks, a permission mode not applied),
   * as one line that starts with the file's path; null when there is nothing to say. A model it
   * falls back from and keys cadre does not use are said once for all files: see
   * {@link describeModelFallbacks} and {@link unusedKeys}.
   */
  warning: string | null;
}

/** Why a listed tool is not there, in a few words. */
function whyMissing(name: string): string {
  if (toolsWithoutEquivalent.has(name)) return 'no cadre equivalent';
  const server = /^mcp__(.+?)(?:__|$)/.exec(name);
  if (server) return `MCP server '${server[1]}' is not configured`;
  return 'no such tool';
}

/** `WebFetch, WebSearch (no cadre equivalent); chrome-mcp (no such tool)`. */
function describeMissing(names: readonly string[]): string {
  const byReason = new Map<string, string[]>();
  for (const name of names) byReason.set(whyMissing(name), [...(byReason.get(whyMissing(name)) ?? []), name]);
  return [...byReason].map(([reason, tools]) => `${tools.join(', ')} (${reason})`).join('; ');
}

/**
 * Resolves an agent against a runtime's tools, model aliases and keys, as a run would, and says
 * in one line what of its file it cannot honour. The agent runs anyway: without the tools it
 * lacks, on the session's model when its own cannot be had.
 * @example reportAgent(agent, { tools: createWorkspaceTools({ root }) }).warning
 */
export function reportAgent(agent: AgentDefinition, options: ReportAgentOptions): AgentReport {
  const { tools: _selected, ...selected } = selectAgentTools(agent, options.tools);
  // The runtime adds an opt-in tool the agent names (`workflow`) beside the ones selected here.
  const tools = { ...selected, names: [...selected.names, ...optInToolNames.filter((name) => listsOptInTool(agent, name))] };
  const model = agent.model === undefined ? null : resolveAgentModel(agent.model, { aliases: options.aliases, env: options.env });
  const parts = [...(agent.warnings ?? [])];
  if (tools.missing.length > 0) parts.push(`tools left out, it runs without them: ${describeMissing(tools.missing)}`);
  return { agent, tools, model, warning: parts.length === 0 ? null : `${agent.source}: ${parts.join('; ')}` };
}

/**
 * The front-matter keys cadre does not use (`temperature`, `emoji`, ...) and how many agents'
 * files hold each, most frequent first: listed once, never a warning per file.
 */
export function unusedKeys(agents: readonly AgentDefinition[]): { key: string; files: number }[] {
  const counts = new Map<string, number>();
  for (const agent of agents) for (const key of Object.keys(agent.extra ?? {})) counts.set(key, (counts.get(key) ?? 0) + 1);
  return [...counts].map(([key, files]) => ({ key, files })).sort((left, right) => right.files - left.files || (left.key < right.key ? -1 : 1));
}

/**
 * One line for every agent whose model falls back to the session's, grouped by the model written
 * and why (`sonnet (12 files), opus (3 files): ANTHROPIC_API_KEY is not set`); null when none does.
 */
export function describeModelFallbacks(reports: readonly AgentReport[]): string | null {
  const byReason = new Map<string, Map<string, number>>();
  for (const { agent, model } of reports) {
    if (model?.fallback === undefined || agent.model === undefined) continue;
    // The reason without the model's own name, so agents naming different models group together.
    const reason = model.fallback.replace(`'${agent.model}' `, '');
    const models = byReason.get(reason) ?? new Map<string, number>();
    models.set(agent.model, (models.get(agent.model) ?? 0) + 1);
    byReason.set(reason, models);
  }
  if (byReason.size === 0) return null;
  const groups = [...byReason].map(([reason, models]) => {
    const names = [...models].map(([name, files]) => `${name} (${files} ${files === 1 ? 'file' : 'files'})`).join(', ');
    return `${names} ${reason}`;
  });
  return `agents run on the session's model instead of the one their file names: ${groups.join('; ')}. Choose one with modelAliases in cadre.config.json`;
}

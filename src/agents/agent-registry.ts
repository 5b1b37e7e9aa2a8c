import { ConfigError } from '../errors/index.ts';
import type { AgentDefinition } from './agent-definition.ts';
import type { AgentLoadError } from './parse-agent-file.ts';
import type { WorkspaceGrant } from '../config/workspace-trust.ts';

function byName(left: AgentDefinition, right: AgentDefinition) {
  return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
}

function isDelegable(agent: AgentDefinition) {
  return agent.mode === 'subagent' || agent.mode === 'all';
}

function isPrimary(agent: AgentDefinition) {
  return agent.mode === 'primary' || agent.mode === 'all';
}

/**
 * The agents that loaded, by name, and the files that did not.
 * Build one with `loadAgents`, or directly from definitions in tests.
 */
export class AgentRegistry {
  readonly #agents = new Map<string, AgentDefinition>();

  /** Why some files or directories did not load; the other agents are still usable. */
  readonly errors: readonly AgentLoadError[];

  /**
   * The MCP servers the workspace's agent files define, as workspace trust sees them (docs/security.md): unless `state` is `none`, `trusted` or `once`, those servers were left out.
   */
  readonly workspace: WorkspaceGrant;

  /**
   * @param agents definitions in precedence order: a later one replaces an earlier one of the same name.
   * @param errors load errors to report alongside them. @default []
   * @param workspace see {@link AgentRegistry.workspace}. @default nothing that needs trust
   */
  constructor(
    agents: Iterable<AgentDefinition>,
    errors: readonly AgentLoadError[] = [],
    workspace: WorkspaceGrant = { part: 'agents', items: [], hash: null, state: 'none' },
  ) {
    for (const agent of agents) this.#agents.set(agent.name, agent);
    this.errors = errors;
    this.workspace = workspace;
  }

  /**
   * What of the loaded agents' files cadre could not apply as written (a widening permission
   * mode, a permission value that is no decision), one line each, starting with the file's path.
   * What depends on the runtime (tools it lacks, models it falls back from) is in `reportAgent`.
   */
  get warnings(): string[] {
    return this.list().flatMap((agent) => (agent.warnings ?? []).map((warning) => `${agent.source}: ${warning}`));
  }

  /** The agent with this name, or undefined. */
  get(name: string): AgentDefinition | undefined {
    return this.#agents.get(name);
  }

  /** Every agent that loaded, sorted by name. */
  list(): AgentDefinition[] {
    return [...this.#agents.values()].sort(byName);
  }

  /** The agents a parent may delegate to (mode `subagent` or `all`), sorted by name. */
  delegable(): AgentDefinition[] {
    return this.list().filter(isDelegable);
  }

  /**
   * The agent to run as a primary agent.
   * @throws {ConfigError} when no agent has this name or its mode is `subagent`.
   */
  primary(name: string): AgentDefinition {
    const agent = this.#agents.get(name);
    if (agent !== undefined && isPrimary(agent)) return agent;
    const choices =
      this.list()
        .filter(isPrimary)
        .map((candidate) => candidate.name)
        .join(', ') || '(none)';
    if (agent === undefined) throw new ConfigError(`Unknown agent '${name}'. Primary agents: ${choices}`);
    throw new ConfigError(`Agent '${name}' is a subagent (mode: subagent) and cannot run as the primary agent. Primary agents: ${choices}`);
  }

  /**
   * One line `name: description` per delegable agent, for the description of the `agent` tool;
   * an empty string when there are none.
   */
  describeDelegable(): string {
    // A YAML block scalar may span lines; the tool description needs one line per agent.
    return this.delegable()
      .map((agent) => `${agent.name}: ${agent.description.replace(/\s+/g, ' ').trim()}`)
      .join('\n');
  }

  /** The tool error for a name that is not delegable: `Unknown agent 'x'. Available agents: a, b`. */
  unknownAgentMessage(name: string): string {
    const names = this.delegable().map((agent) => agent.name);
    return `Unknown agent '${name}'. Available agents: ${names.length > 0 ? names.join(', ') : '(none)'}`;
  }
}

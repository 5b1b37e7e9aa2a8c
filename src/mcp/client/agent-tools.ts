import type { ToolSet } from 'ai';
import type { AgentDefinition } from '../../agents/agent-definition.ts';
import { selectAgentTools } from '../../agents/tool-selection.ts';
import { mcpServerConfigSchema, type McpServerConfig } from '../../config/mcp-servers-config.ts';
import { ConfigError } from '../../errors/config-error.ts';
import { createMcpClients, type McpServerEntry } from './mcp-clients.ts';
import type { McpServerError } from './mcp-server-error.ts';
import { serversNamedBy } from './mcp-tool-name.ts';
import { toolsAt, type ToolPlace } from '../../tools/tools-at.ts';

/** The MCP options of a runtime (grouped in `CadreOptions`). */
export interface McpOptions {
  /**
   * MCP servers whose tools agents get (docs/mcp.md), in the format Claude Desktop and
   * Claude Code use: `{ command, args, env }` or `{ type: 'http', url, headers }`. Their tools are
   * named `mcp__<server>__<tool>`, risk `network` (or `read` when the server marks a tool
   * `readOnlyHint`). A server starts when a run first needs it, is shared, and closes with
   * the runtime; one that fails is reported and the others go on.
   * @example { github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] } }
   */
  mcpServers?: Record<string, McpServerConfig | McpServerEntry>;
}

/** Options of {@link createAgentTools}. */
export interface AgentToolsOptions extends McpOptions {
  /** The runtime's own tools (the workspace's): every agent picks from them. */
  workspaceTools: ToolSet;
  /** The environment stdio servers inherit. @default process.env */
  env?: Record<string, string | undefined>;
  /** Where an agent file's invalid inline server is reported (it is left out). */
  onError: (error: unknown) => void;
  /**
   * Told once per server (per runtime) that an MCP server an agent needs failed to start or went
   * away, so the person sees it too, not only the model (which is told with its prompt).
   */
  onServerFailure?: (failure: McpServerError) => void;
}

/** The tools each agent gets: the runtime's, and those of the MCP servers it needs. */
export interface AgentTools {
  /** The tools an agent may pick from: the workspace tools and those of the MCP servers it needs (started if need be). */
  available(agent: AgentDefinition): Promise<ToolSet>;
  /** The tools an agent picks from `available`; a listed tool the runtime lacks is left out. */
  select(agent: AgentDefinition, available?: ToolSet): ToolSet;
  /** Why MCP servers an agent needs are unavailable (told to the model with its prompt), as of its last `available`. */
  notices(agent: AgentDefinition): string[];
  /**
   * The tools of a run that works elsewhere (its own git worktree): the workspace tools rooted
   * there, and the MCP servers it needs started there for it alone, closed by `close` when it ends.
   */
  availableAt(agent: AgentDefinition, place: ToolPlace): Promise<{ tools: ToolSet; notices: string[]; close(): Promise<void> }>;
}

/** Creates the {@link AgentTools} of a runtime; no MCP server starts until an agent needs it. */
export function createAgentTools(options: AgentToolsOptions): AgentTools {
  const { workspaceTools } = options;
  const configured: Record<string, McpServerEntry> = Object.fromEntries(
    Object.entries(options.mcpServers ?? {}).map(([name, entry]) => [name, 'config' in entry ? entry : { config: entry, source: 'configuration' }]),
  );
  const mcp = createMcpClients({
    servers: configured,
    env: options.env,
    clientInfo: { name: 'cadre', version: '0.1.0' },
  });
  const notices = new WeakMap<AgentDefinition, string[]>();
  /** The servers whose failure was reported already: each is reported once. */
  const reported = new Set<string>();

  /** The servers an agent file defines inline (Claude Code's `mcpServers`), for that agent's runs. */
  function agentMcpServers(agent: AgentDefinition): Record<string, McpServerEntry> {
    const own: Record<string, McpServerEntry> = {};
    for (const server of agent.mcpServers ?? []) {
      if (!server.config) continue;
      const parsed = mcpServerConfigSchema.safeParse(server.config);
      if (parsed.success) own[server.name] = { config: parsed.data, source: `agent ${agent.name}` };
      else options.onError(new ConfigError(`Agent '${agent.name}': MCP server '${server.name}' is not a valid server definition; it is left out.`));
    }
    return own;
  }

  /** The servers an agent needs, by name, and those its file defines inline. */
  function neededServers(agent: AgentDefinition): { names: string[]; own: Record<string, McpServerEntry> } {
    const own = agentMcpServers(agent);
    const listed = agent.tools.kind === 'list' ? agent.tools.names : null;
    // A server the agent file names (configured elsewhere, or defined inline) is the agent's either way.
    const named = (agent.mcpServers ?? []).map((server) => server.name).filter((name) => mcp.names.includes(name) && !(name in own));
    return { names: [...new Set([...serversNamedBy(listed, mcp.names), ...named])], own };
  }

  return {
    async availableAt(agent, place) {
      const workspace = toolsAt(workspaceTools, place);
      const { names, own } = neededServers(agent);
      if (names.length === 0 && Object.keys(own).length === 0) return { tools: workspace, notices: [], close: async () => {} };
      const clients = createMcpClients({
        servers: Object.fromEntries(names.map((name) => [name, configured[name]])),
        env: options.env,
        cwd: place.root,
        clientInfo: { name: 'cadre', version: '0.1.0' },
      });
      const { tools, failures } = await clients.tools(names, own);
      return {
        tools: { ...workspace, ...tools },
        notices: failures.map((failure) => `${failure.message} Its tools are not available in this conversation.`),
        close: () => clients.close(),
      };
    },
    async available(agent) {
      const own = agentMcpServers(agent);
      if (mcp.names.length === 0 && Object.keys(own).length === 0) return workspaceTools;
      const listed = agent.tools.kind === 'list' ? agent.tools.names : null;
      // A server the agent file names (configured elsewhere, or defined inline) is the agent's either way.
      const named = (agent.mcpServers ?? []).map((server) => server.name).filter((name) => mcp.names.includes(name) && !(name in own));
      const { tools, failures } = await mcp.tools([...new Set([...serversNamedBy(listed, mcp.names), ...named])], own);
      for (const failure of failures) {
        if (reported.has(failure.server)) continue;
        reported.add(failure.server);
        options.onServerFailure?.(failure);
      }
      notices.set(
        agent,
        failures.map((failure) => `${failure.message} Its tools are not available in this conversation.`),
      );
      return { ...workspaceTools, ...tools };
    },
    select(agent, available = workspaceTools) {
      // Resolved at each run against the tools this runtime has (MCP servers' too).
      return selectAgentTools(agent, available).tools;
    },
    notices(agent) {
      return notices.get(agent) ?? [];
    },
  };
}

/**
 * What MCP server definitions hold that must never show: header values (and a bearer token on its
 * own) and environment values, as the keys they usually are.
 */
export function mcpSecrets(servers: McpOptions['mcpServers']): string[] {
  const values: string[] = [];
  for (const entry of Object.values(servers ?? {})) {
    const config = 'config' in entry ? entry.config : entry;
    const given = config.type === 'http' ? Object.values(config.headers ?? {}) : Object.values(config.env ?? {});
    for (const value of given) {
      values.push(value);
      const token = /^(?:Bearer|Basic|token)\s+(\S+)$/i.exec(value.trim())?.[1];
      if (token) values.push(token);
    }
  }
  return values.filter((value) => value.trim().length >= 8);
}

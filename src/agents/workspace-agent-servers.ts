import { relative } from 'node:path';
import { mcpServerItem } from '../config/workspace-config.ts';
import { grantApplies, grantHash, partState, readWorkspaceTrust, type WorkspaceGrant } from '../config/workspace-trust.ts';
import type { AgentDefinition } from './agent-definition.ts';

/** Where the workspace's agents came from, and how its trust is checked. */
export interface WorkspaceAgentServersOptions {
  /** The workspace: the trust is recorded for it, and paths in the hash are relative to it. */
  cwd: string;
  /** The user's cadre folder, which holds `trust.json`. */
  userConfigDirectory: string;
  /** Trusted for this command by `--trust` or `CADRE_TRUST=1`. */
  once: boolean;
}

/**
 * The MCP servers that agent files of the workspace define inline (Claude Code's `mcpServers`)
 * start programs or send headers, so they apply only once a person trusted them (docs/security.md). Returns the agents as they apply (untrusted: without those servers; the one line
 * about what the workspace left out says so) and the `agents` part of the workspace's trust.
 */
export async function applyWorkspaceAgentServers(
  agents: readonly AgentDefinition[],
  options: WorkspaceAgentServersOptions,
): Promise<{ agents: AgentDefinition[]; grant: WorkspaceGrant }> {
  const content: Record<string, Record<string, unknown>> = {};
  const items: WorkspaceGrant['items'] = [];
  for (const agent of agents) {
    const inline = (agent.mcpServers ?? []).filter((server) => server.config !== undefined);
    if (inline.length === 0) continue;
    const file = relative(options.cwd, agent.source);
    content[file] = Object.fromEntries(inline.map((server) => [server.name, server.config]));
    for (const server of inline) items.push(mcpServerItem(`agent ${agent.name} (${file}) mcpServers.${server.name}`, server.config!));
  }
  const hash = items.length === 0 ? null : grantHash(content);
  const record = hash === null ? null : await readWorkspaceTrust({ cwd: options.cwd, userConfigDirectory: options.userConfigDirectory });
  const state = partState(hash, record?.parts.agents, options.once);
  const grant: WorkspaceGrant = { part: 'agents', items, hash, state };
  if (grantApplies(state)) return { agents: [...agents], grant };
  const applied = agents.map((agent): AgentDefinition => {
    if (!(agent.mcpServers ?? []).some((server) => server.config !== undefined)) return agent;
    return { ...agent, mcpServers: (agent.mcpServers ?? []).filter((server) => server.config === undefined) };
  });
  return { agents: applied, grant };
}

import { configLocations } from '../config/config-locations.ts';
import { ConfigError } from '../errors/config-error.ts';
import { createMcpClients, type McpServerEntry } from '../mcp/client/mcp-clients.ts';
import { projectMcpFileName, readProjectMcpServers, trustProjectMcpServers } from '../mcp/client/project-mcp-servers.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { RuntimeFlags } from './command-options.ts';
import { agentPlacesOf, loadCliConfig, mcpServersOf } from './open-runtime.ts';
import { announceWorkspaceTrust, describeItem, leftOut, workspaceTrust } from './workspace-trust-lines.ts';

/**
 * `cadre mcp trust [NAME...]`: a person trusts the servers of the project's `.mcp.json` (all, or
 * those named) as they are defined now; a later change to one needs trust again. Kept in the
 * user's configuration directory (`mcp-trust.json`), never in the project.
 */
export async function mcpTrustCommand(context: CliContext, flags: RuntimeFlags, names: string[]): Promise<number> {
  const { userDirectory } = configLocations({ cwd: context.cwd, configFile: flags.config, env: context.env, home: context.env.HOME });
  const project = await readProjectMcpServers({ cwd: context.cwd, userConfigDirectory: userDirectory, env: context.env });
  if (!project) throw new ConfigError(`No ${projectMcpFileName} in ${context.cwd}: there is nothing to trust.`);
  const unknown = names.filter((name) => !project.servers.some((server) => server.name === name));
  if (unknown.length > 0)
    throw new ConfigError(
      `${project.path} has no server ${unknown.map((name) => `'${name}'`).join(', ')}. Its servers: ${project.servers.map((server) => server.name).join(', ') || '(none)'}`,
    );
  const chosen = names.length === 0 ? project.servers : project.servers.filter((server) => names.includes(server.name));
  const file = await trustProjectMcpServers({ cwd: context.cwd, userConfigDirectory: userDirectory, servers: chosen });
  if (flags.json) writeLine(context.stdout, JSON.stringify({ trusted: chosen.map((server) => server.name), file }));
  else {
    for (const server of chosen) writeLine(context.stdout, `trusted ${server.name}: ${describeCommand(server.config)}`);
    if (chosen.length === 0) writeLine(context.stdout, `${project.path} names no servers.`);
  }
  for (const problem of project.problems) writeLine(context.stderr, `cadre: ${project.path}: ${problem}`);
  return 0;
}

/**
 * `cadre mcp list`: starts every MCP server agents may use and says what each offers, or why it
 * failed; servers of the workspace's configuration that wait for trust are listed as such, never
 * started, and the workspace's trust line says what was left out, as every command does.
 */
export async function mcpListCommand(context: CliContext, flags: RuntimeFlags): Promise<number> {
  const { loadAgents } = await import('../agents/load-agents.ts');
  const config = await loadCliConfig(context, flags);
  const agents = await loadAgents(agentPlacesOf(context, flags, config));
  const { servers, grant, project } = await mcpServersOf(context, flags, config, true);
  announceWorkspaceTrust(context, workspaceTrust(context.cwd, [config.workspace, grant, agents.workspace]));
  const untrusted = [
    ...(project?.servers ?? [])
      .filter((server) => server.trust !== 'trusted' && !(server.name in config.mcpServers))
      .map((server) => `${server.name} (${projectMcpFileName}, ${server.trust === 'new' ? 'not trusted' : 'changed since trusted'}: cadre mcp trust)`),
    // Servers of the workspace's cadre.config.json and agent files wait for `cadre trust`.
    ...leftOut(workspaceTrust(context.cwd, [config.workspace, agents.workspace]))
      .filter((item) => item.kind === 'program')
      .map((item) => `${describeItem(item)}: not trusted (cadre trust)`),
  ];
  const clients = createMcpClients({ servers, env: context.env, cwd: context.cwd });
  try {
    await clients.tools(Object.keys(servers));
    const status = clients.status();
    if (flags.json) {
      writeLine(context.stdout, JSON.stringify({ servers: status, untrusted }));
    } else {
      for (const server of status) {
        writeLine(
          context.stdout,
          `${server.name} (${server.source}): ${server.state === 'ready' ? `${server.tools.length} tools` : `${server.state}: ${server.error ?? 'unknown reason'}`}`,
        );
        for (const tool of server.tools) writeLine(context.stdout, `  ${tool}`);
      }
      for (const line of untrusted) writeLine(context.stdout, line);
      if (status.length === 0 && untrusted.length === 0)
        writeLine(context.stdout, 'No MCP servers configured (mcpServers in cadre.config.json, or a trusted .mcp.json).');
    }
    return status.some((server) => server.state !== 'ready') ? 1 : 0;
  } finally {
    await clients.close();
  }
}

function describeCommand(config: McpServerEntry['config']): string {
  return config.type === 'http' ? config.url : [config.command, ...(config.args ?? [])].join(' ');
}

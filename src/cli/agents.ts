import { delegationTool, parsePermissionRule } from '../permissions/permission-rule.ts';
import type { PermissionsConfig } from '../permissions/permissions.ts';
import { relative, sep } from 'node:path';
import type { ToolSet } from 'ai';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { AgentReport } from '../agents/report-agent.ts';
import type { HarnessReport } from '../harnesses/describe-harness.ts';
import { clampActivity } from '../runs/activity.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { RuntimeFlags } from './command-options.ts';
import { agentPlacesOf, loadCliConfig, mcpServersOf } from './open-runtime.ts';
import { announceWorkspaceTrust, describeWorkspaceTrust, leftOut, workspaceTrust } from './workspace-trust-lines.ts';
import { formatTable } from './run-lines.ts';
import { configuredSandboxStatus, describeSandbox } from './sandbox-lines.ts';

/** What the agents are resolved against: the runtime's tools, aliases and keys. */
export interface AgentRuntimeView {
  tools: ToolSet;
  aliases: Readonly<Record<string, string>>;
  env: Record<string, string | undefined>;
}

/** Every loaded agent resolved against the runtime, sorted by name. */
export async function reportAgents(agents: AgentRegistry, runtime: AgentRuntimeView): Promise<AgentReport[]> {
  const { reportAgent } = await import('../agents/report-agent.ts');
  return agents.list().map((agent) => reportAgent(agent, { tools: runtime.tools, aliases: runtime.aliases, env: runtime.env }));
}

function displaySource(context: CliContext, source: string): string {
  if (source === 'built-in' || source === 'code') return source;
  const path = relative(context.cwd, source);
  return path.startsWith(`..${sep}`) ? source : path;
}

function toJson(report: AgentReport, harness: HarnessReport | null) {
  const { agent, tools, model } = report;
  return {
    name: agent.name,
    display_name: agent.displayName ?? null,
    mode: agent.mode,
    model: agent.model ?? null,
    resolved_model: model?.spec ?? null,
    model_fallback: model?.fallback ?? null,
    description: agent.description,
    tools: tools.names,
    tool_selection: agent.tools,
    disallowed_tools: agent.disallowedTools ?? [],
    dropped_tools: tools.missing,
    max_turns: agent.maxTurns ?? null,
    permission_mode: agent.permissionMode ?? null,
    permission_mode_applied: agent.permissionMode === undefined || agent.permissionMode === 'default' || agent.permissionMode === 'plan',
    permissions: agent.permissions ?? null,
    color: agent.color ?? null,
    mcp_servers: agent.mcpServers ?? [],
    source: agent.source,
    warnings: agent.warnings ?? [],
    warning: report.warning,
    extra: agent.extra ?? {},
    harness,
  };
}

function modelColumn({ agent, model }: AgentReport): string {
  // A program's agent: its model name goes to the program as written.
  if (agent.harness !== undefined) return agent.model ?? "(the program's)";
  if (agent.model === undefined || model === null) return '(session model)';
  if (model.spec === null) return `${agent.model} (session model)`;
  return model.spec === agent.model ? model.spec : `${agent.model} (${model.spec})`;
}

/** `all (6)`, `read_file, grep`, `9 tools`, with what it goes without: `read_file (2 dropped)`. */
function toolsColumn({ agent, tools }: AgentReport): string {
  // A program uses its own tools; what cadre's rules let it do is said under "Agent programs".
  if (agent.harness !== undefined) return "(the program's)";
  const everything = agent.tools.kind === 'all' && (agent.disallowedTools ?? []).length === 0 && tools.narrowed.length === 0;
  let text = everything ? `all (${tools.names.length})` : tools.names.length === 0 ? 'none' : tools.names.join(', ');
  if (text.length > 28) text = `${tools.names.length} tools`;
  if (agent.permissionMode === 'plan') text += ' (plan)';
  if (tools.missing.length > 0) text += ` (${tools.missing.length} dropped)`;
  return text;
}

/**
 * `cadre agents`: what loaded, with each agent's model and tools in this runtime; on stderr what
 * did not load, one warning line per file whose file cadre does not fully honour, and once the
 * keys cadre does not use. Exit 0 even when some files are broken.
 */
export async function agentsCommand(context: CliContext, flags: RuntimeFlags): Promise<number> {
  const [{ loadAgents }, { createWorkspaceTools }, { describeModelFallbacks, unusedKeys }] = await Promise.all([
    import('../agents/load-agents.ts'),
    import('../tools/workspace-tools.ts'),
    import('../agents/report-agent.ts'),
  ]);
  const config = await loadCliConfig(context, flags);
  const agents = await loadAgents(agentPlacesOf(context, flags, config));
  const configured = await mcpServersOf(context, flags, config, true);
  const workspace = workspaceTrust(context.cwd, [config.workspace, configured.grant, agents.workspace]);
  // The table says it on stdout; under --json the line on stderr does.
  if (flags.json) announceWorkspaceTrust(context, workspace);
  // MCP servers are started to see their tools, and so that one that fails is reported here.
  const mcp = await startMcpServers(context, configured.servers);
  const reports = await reportAgents(agents, {
    tools: { ...createWorkspaceTools({ root: context.cwd }), ...mcp.tools },
    aliases: config.modelAliases,
    env: context.env,
  });
  const warnings = reports.flatMap((report) => (report.warning === null ? [] : [report.warning]));
  const unused = unusedKeys(agents.list());
  const fallbacks = describeModelFallbacks(reports);
  const sandbox = await configuredSandboxStatus(context, flags, config);
  // Harness agents: whether each program is here, its version, what cadre's rules allow it.
  const { describeHarness, describeHarnessLine } = await import('../harnesses/describe-harness.ts');
  const harnesses = await Promise.all(
    reports.map((report) => describeHarness(report.agent, { commands: config.harnesses, env: context.env, permissions: config.permissions })),
  );
  if (flags.json) {
    const document = {
      agents: reports.map((report, index) => toJson(report, harnesses[index])),
      errors: agents.errors,
      warnings,
      model_fallbacks: fallbacks,
      unused_keys: Object.fromEntries(unused.map(({ key, files }) => [key, files])),
      sandbox,
      delegation_rules: delegationRules(config.permissions),
      mcp_server_status: mcp.status,
      workspace: {
        path: workspace.workspace,
        state: workspace.state,
        trusted: workspace.state === 'trusted' || workspace.state === 'once',
        left_out: leftOut(workspace),
      },
    };
    writeLine(context.stdout, JSON.stringify(document, null, 2));
  } else {
    const rows = reports.map((report) => [
      report.agent.name,
      report.agent.mode,
      modelColumn(report),
      toolsColumn(report),
      displaySource(context, report.agent.source),
      clampActivity(report.agent.description, 72),
    ]);
    writeLine(context.stdout, formatTable(['NAME', 'MODE', 'MODEL', 'TOOLS', 'SOURCE', 'DESCRIPTION'], rows));
    const programs = reports.flatMap((report, index) => (harnesses[index] === null ? [] : [describeHarnessLine(report.agent.name, harnesses[index])]));
    if (programs.length > 0) writeLine(context.stdout, `\nAgent programs (docs/harnesses.md):\n${programs.join('\n')}`);
    // How every agent's bash is confined: the same box for all of them.
    writeLine(context.stdout, `\n${describeWorkspaceTrust(workspace)}`);
    writeLine(context.stdout, describeDelegationRules(config.permissions));
    writeLine(context.stdout, describeSandbox(sandbox));
  }
  if (agents.errors.length > 0) {
    writeLine(context.stderr, `${agents.errors.length} agent file(s) did not load:`);
    for (const error of agents.errors) writeLine(context.stderr, error.message);
  }
  for (const warning of warnings) writeLine(context.stderr, `warning: ${warning}`);
  for (const failure of mcp.failures) writeLine(context.stderr, `warning: ${failure}`);
  if (fallbacks !== null) writeLine(context.stderr, `note: ${fallbacks}`);
  if (unused.length > 0) {
    const keys = unused.map(({ key, files }) => `${key} (${files} ${files === 1 ? 'file' : 'files'})`).join(', ');
    writeLine(context.stderr, `note: front-matter keys cadre does not use, kept under "extra" in --json: ${keys}`);
  }
  return 0;
}

/** The configuration's and the flags' rules on delegation (`agent`, `agent(NAME)`, `agent(model:PATTERN)`, Claude Code's `Agent`/`Task`), per decision. */
function delegationRules(permissions: PermissionsConfig): Required<PermissionsConfig> {
  const onDelegation = (rules: string[] | undefined) =>
    (rules ?? []).filter((text) => {
      const rule = parsePermissionRule(text);
      return rule.kind === 'agent' || (rule.kind === 'tool' && rule.tool === delegationTool);
    });
  return { allow: onDelegation(permissions.allow), ask: onDelegation(permissions.ask), deny: onDelegation(permissions.deny) };
}

/** `Delegation rules: deny agent(model:openai:*); ask agent(review-*)`, or how to write one when there is none. */
export function describeDelegationRules(permissions: PermissionsConfig): string {
  const rules = delegationRules(permissions);
  const parts = (['deny', 'ask', 'allow'] as const)
    .filter((decision) => rules[decision].length > 0)
    .map((decision) => `${decision} ${rules[decision].join(', ')}`);
  return parts.length > 0
    ? `Delegation rules: ${parts.join('; ')} (agent(NAME), agent(model:PATTERN); agents' front matter can only narrow them)`
    : 'Delegation rules: none, every delegation is allowed (add agent(NAME) or agent(model:PATTERN) rules under "permissions" to deny or ask)';
}

/** Starts the MCP servers agents may use (configured, or trusted in `.mcp.json`): their tools, where each stands, and what failed. */
async function startMcpServers(context: CliContext, servers: Awaited<ReturnType<typeof mcpServersOf>>['servers']) {
  if (Object.keys(servers).length === 0) return { tools: {}, status: [], failures: [] as string[] };
  const { createMcpClients } = await import('../mcp/client/mcp-clients.ts');
  const clients = createMcpClients({ servers, env: context.env, cwd: context.cwd, startTimeoutMs: 15_000 });
  try {
    const { tools, failures } = await clients.tools(Object.keys(servers));
    return { tools, status: clients.status(), failures: failures.map((failure) => failure.message) };
  } finally {
    await clients.close();
  }
}

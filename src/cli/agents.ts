import { relative, sep } from 'node:path';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import { resolveModelAlias } from '../config/model-aliases.ts';
import { clampActivity } from '../runs/activity.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { RuntimeFlags } from './command-options.ts';
import { loadCliConfig } from './open-runtime.ts';
import { formatTable } from './run-lines.ts';
import { configuredSandboxStatus, describeSandbox } from './sandbox-lines.ts';

/**
 * What the loaded agents' files hold that cadre does not use (unknown keys, tools without an
 * equivalent), and problems of agents that loaded but cannot work: a tool that does not exist, a
 * model name that no alias resolves. One line each, starting with the agent's source.
 */
export function agentWarnings(agents: AgentRegistry, knownTools: readonly string[], modelAliases?: Record<string, string>): string[] {
  const problems = agents.list().flatMap((agent) => {
    const lines = (agent.tools ?? [])
      // The built-in agents go without a read tool a runtime does not have; that is no problem.
      .filter((tool) => !knownTools.includes(tool) && agent.source !== 'built-in')
      .map((tool) => `${agent.source}: tools: unknown tool '${tool}': this agent fails until it exists (known tools: ${knownTools.join(', ')})`);
    if (agent.model !== undefined && modelAliases !== undefined && !resolveModelAlias(agent.model, modelAliases).includes(':')) {
      lines.push(`${agent.source}: model: '${agent.model}' is no model spec and no alias: add it to modelAliases in cadre.config.json (known: ${Object.keys(modelAliases).join(', ')})`);
    }
    return lines;
  });
  return [...agents.warnings, ...problems];
}

function displaySource(context: CliContext, source: string): string {
  if (source === 'built-in' || source === 'code') return source;
  const path = relative(context.cwd, source);
  return path.startsWith(`..${sep}`) ? source : path;
}

function toJson(agent: AgentDefinition, modelAliases: Record<string, string>) {
  const { name, mode, model, description, tools, maxTurns, source, warnings, extra } = agent;
  return {
    name,
    mode,
    model: model ?? null,
    resolved_model: model === undefined ? null : resolveModelAlias(model, modelAliases),
    description,
    tools: tools ?? [],
    max_turns: maxTurns ?? null,
    source,
    warnings: warnings ?? [],
    extra: extra ?? {},
  };
}

function modelColumn(agent: AgentDefinition, modelAliases: Record<string, string>): string {
  if (agent.model === undefined) return '(session model)';
  const spec = resolveModelAlias(agent.model, modelAliases);
  return spec === agent.model ? spec : `${agent.model} (${spec})`;
}

/** `cadre agents`: what loaded, and on stderr what did not. Exit 0 even when some files are broken. */
export async function agentsCommand(context: CliContext, flags: RuntimeFlags): Promise<number> {
  const [{ loadAgents }, { createWorkspaceTools }] = await Promise.all([import('../agents/load-agents.ts'), import('../tools/workspace-tools.ts')]);
  const config = await loadCliConfig(context, flags);
  const agents = await loadAgents({ cwd: context.cwd, home: context.env.HOME, env: context.env, dirs: config.agentsDirs });
  const warnings = agentWarnings(agents, Object.keys(createWorkspaceTools({ root: context.cwd })), config.modelAliases);
  const sandbox = await configuredSandboxStatus(context, flags, config);
  if (flags.json) {
    const document = { agents: agents.list().map((agent) => toJson(agent, config.modelAliases)), errors: agents.errors, warnings, sandbox };
    writeLine(context.stdout, JSON.stringify(document, null, 2));
  } else {
    const rows = agents.list().map((agent) => [
      agent.name,
      agent.mode,
      modelColumn(agent, config.modelAliases),
      displaySource(context, agent.source),
      clampActivity(agent.description, 72),
    ]);
    writeLine(context.stdout, formatTable(['NAME', 'MODE', 'MODEL', 'SOURCE', 'DESCRIPTION'], rows));
    // How every agent's bash is confined: the same box for all of them.
    writeLine(context.stdout, `\n${describeSandbox(sandbox)}`);
  }
  if (agents.errors.length > 0) {
    writeLine(context.stderr, `${agents.errors.length} agent file(s) did not load:`);
    for (const error of agents.errors) writeLine(context.stderr, error.message);
  }
  for (const warning of warnings) writeLine(context.stderr, `warning: ${warning}`);
  return 0;
}

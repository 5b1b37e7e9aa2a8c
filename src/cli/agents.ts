import { relative, sep } from 'node:path';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import { clampActivity } from '../runs/activity.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { RuntimeFlags } from './command-options.ts';
import { loadCliConfig } from './open-runtime.ts';
import { formatTable } from './run-lines.ts';

/** Problems of agents that loaded but cannot work, like a tool that does not exist: one line each. */
export function agentWarnings(agents: AgentRegistry, knownTools: readonly string[]): string[] {
  return agents.list().flatMap((agent) =>
    (agent.tools ?? [])
      .filter((tool) => !knownTools.includes(tool))
      .map((tool) => `${agent.source}: tools: unknown tool '${tool}' (known tools: ${knownTools.join(', ')})`),
  );
}

function displaySource(context: CliContext, source: string): string {
  if (source === 'built-in' || source === 'code') return source;
  const path = relative(context.cwd, source);
  return path.startsWith(`..${sep}`) ? source : path;
}

function toJson(agent: AgentDefinition) {
  const { name, mode, model, description, tools, maxTurns, source } = agent;
  return { name, mode, model: model ?? null, description, tools: tools ?? [], max_turns: maxTurns ?? null, source };
}

/** `cadre agents`: what loaded, and on stderr what did not. Exit 0 even when some files are broken. */
export async function agentsCommand(context: CliContext, flags: RuntimeFlags): Promise<number> {
  const [{ loadAgents }, { createWorkspaceTools }] = await Promise.all([import('../agents/load-agents.ts'), import('../tools/workspace-tools.ts')]);
  const config = await loadCliConfig(context, flags);
  const agents = await loadAgents({ cwd: context.cwd, dirs: config.agentsDirs });
  const warnings = agentWarnings(agents, Object.keys(createWorkspaceTools({ root: context.cwd })));
  if (flags.json) {
    const document = { agents: agents.list().map(toJson), errors: agents.errors, warnings };
    writeLine(context.stdout, JSON.stringify(document, null, 2));
  } else {
    const rows = agents.list().map((agent) => [
      agent.name,
      agent.mode,
      agent.model ?? '(session model)',
      displaySource(context, agent.source),
      clampActivity(agent.description, 72),
    ]);
    writeLine(context.stdout, formatTable(['NAME', 'MODE', 'MODEL', 'SOURCE', 'DESCRIPTION'], rows));
  }
  if (agents.errors.length > 0) {
    writeLine(context.stderr, `${agents.errors.length} agent file(s) did not load:`);
    for (const error of agents.errors) writeLine(context.stderr, error.message);
  }
  for (const warning of warnings) writeLine(context.stderr, `warning: ${warning}`);
  return 0;
}

import { Hono } from 'hono';
import { resolveAgentColor } from '../agents/agent-color.ts';
import type { Cadre } from '../runtime/create-cadre.ts';

/**
 * `GET /api/agents`: the agents of this runtime as the dashboard shows them: id, the name its
 * file gives, mode, description, and its colour as `#rrggbb` (null for none), which colours its runs.
 */
export function createAgentRoutes({ cadre }: { cadre: Cadre }): Hono {
  const routes = new Hono();
  routes.get('/', (context) =>
    context.json({
      agents: cadre.agents.list().map((agent) => ({
        name: agent.name,
        display_name: agent.displayName ?? null,
        mode: agent.mode,
        description: agent.description,
        color: resolveAgentColor(agent.color)?.hex ?? null,
      })),
    }),
  );
  return routes;
}

// What the page holds: the open session, its runs, cards and asks, and the agents' colours.

import { api } from './dom.js';

export const activeStatuses = new Set(['queued', 'running']);
export const state = {
  sessionId: null,
  sessionState: null,
  runs: new Map(),
  cards: new Map(),
  approvals: new Map(),
  events: null,
  lastEventAt: 0,
  tokens: null,
  agentColors: new Map(),
};

/** Colours a node with its agent's colour (the agent file's `color`, from /api/agents as #rrggbb). */
export function paintAgent(node, agent) {
  const color = state.agentColors.get(agent);
  if (!color) return node;
  node.style.setProperty('--agent-color', color);
  node.classList.add('agent-colored');
  return node;
}

export async function loadAgentColors() {
  const { agents } = await api('/api/agents');
  for (const agent of agents) if (agent.color) state.agentColors.set(agent.name, agent.color);
}

export {
  agentFrontMatterSchema,
  agentModes,
  agentNamePattern,
  defineAgent,
  type AgentDefinition,
  type AgentInput,
  type AgentMode,
} from './agent-definition.ts';
export { AgentRegistry } from './agent-registry.ts';
export { builtInAgents, generalAgent, mainAgent } from './built-in-agents.ts';
export { loadAgents, type LoadAgentsOptions } from './load-agents.ts';
export { agentLoadErrors, parseAgentFile, type AgentLoadError, type ParseAgentFileResult } from './parse-agent-file.ts';
export { agentToolNames, mapAgentToolNames, readToolNames, toolsWithoutEquivalent } from './agent-tool-names.ts';

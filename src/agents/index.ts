export {
  agentFrontMatterSchema,
  agentModes,
  agentNamePattern,
  agentPermissionModes,
  defineAgent,
  type AgentDefinition,
  type AgentInput,
  type AgentMcpServer,
  type AgentMode,
  type AgentPermissionMode,
} from './agent-definition.ts';
export { agentIdFromName } from './agent-id.ts';
export { AgentRegistry } from './agent-registry.ts';
export { builtInAgents, generalAgent, mainAgent } from './built-in-agents.ts';
export { agentFilesVersion, loadAgents, type LoadAgentsOptions } from './load-agents.ts';
export { agentLoadErrors, parseAgentFile, type AgentLoadError, type ParseAgentFileOptions, type ParseAgentFileResult } from './parse-agent-file.ts';
export { agentToolNames, cadreToolName, delegationToolAliases, mapAgentToolNames, readToolNames, toolsWithoutEquivalent } from './agent-tool-names.ts';
export { opencodePermissionRules } from './opencode-permission.ts';
export { reportAgent, unusedKeys, type AgentReport, type ReportAgentOptions } from './report-agent.ts';
export {
  allTools,
  listsOptInTool,
  optInToolNames,
  selectAgentTools,
  toolPatternMatches,
  type AgentToolRequest,
  type SelectedTools,
  type ToolSelection,
} from './tool-selection.ts';

/**
 * MCP both ways (docs/mcp.md), as `cadre/mcp`: cadre's delegation tools served to MCP
 * hosts (`cadre mcp`), and MCP servers' tools given to cadre's agents.
 */
export { createMcpServer, mcpToolNames, type CreateMcpServerOptions } from './server/create-mcp-server.ts';
export { createRunTaskStore, type RunTaskStoreOptions } from './server/run-task-store.ts';
export { createMcpHub, type McpHub, type McpHubOptions } from './server/mcp-hub.ts';
export {
  createMcpClients,
  type McpClients,
  type McpClientsOptions,
  type McpServerEntry,
  type McpServerStatus,
  type McpToolsResult,
} from './client/mcp-clients.ts';
export { McpServerError } from './client/mcp-server-error.ts';
export { mcpToolName } from './client/mcp-tool-name.ts';
export type { McpServerConfig, StdioMcpServerConfig, HttpMcpServerConfig } from '../config/mcp-servers-config.ts';

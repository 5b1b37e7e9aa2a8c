import type { ToolSet } from 'ai';
import { type AgentToolRequest, listsOptInTool } from '../agents/tool-selection.ts';
import type { DelegationScope } from '../delegation/delegation-services.ts';
import { createWorkflowTool, type WorkflowToolServices, workflowToolName } from '../workflows/workflow-tool.ts';

/**
 * The `workflow` tool for `agent` when its `tools` list names it (it is never given by default),
 * bound to the caller at `scope`; otherwise no tool.
 */
export function workflowToolFor(agent: AgentToolRequest | undefined, scope: DelegationScope, services: WorkflowToolServices): ToolSet {
  return agent && listsOptInTool(agent, workflowToolName) ? { [workflowToolName]: createWorkflowTool(services, scope) } : {};
}

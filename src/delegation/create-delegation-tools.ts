import type { ToolSet } from 'ai';
import type { DelegationScope, DelegationServices } from './delegation-services.ts';
import { createAgentListTool } from './tools/agent-list-tool.ts';
import { createAgentOutputTool } from './tools/agent-output-tool.ts';
import { createAgentParallelTool } from './tools/agent-parallel-tool.ts';
import { createAgentSendTool } from './tools/agent-send-tool.ts';
import { createAgentStopTool } from './tools/agent-stop-tool.ts';
import { createAgentTool } from './tools/agent-tool.ts';

/** The model-facing delegation tools, bound to the session that calls them. */
export function createDelegationTools(services: DelegationServices, scope: DelegationScope): ToolSet {
  return {
    agent: createAgentTool(services, scope),
    agent_parallel: createAgentParallelTool(services, scope),
    agent_list: createAgentListTool(services, scope),
    agent_output: createAgentOutputTool(services, scope),
    agent_stop: createAgentStopTool(services, scope),
    agent_send: createAgentSendTool(services, scope),
  };
}

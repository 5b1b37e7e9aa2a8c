import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type CreateTaskResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { asSchema, type ToolSet } from 'ai';
import type { Cadre } from '../../runtime/create-cadre.ts';
import { timeSortedId, type NewId } from '../../util/clock.ts';
import { callDelegationTool } from './call-delegation-tool.ts';

/** The delegation tools `cadre mcp` offers, in the order hosts list them. */
export const mcpToolNames = ['agent', 'agent_parallel', 'agent_list', 'agent_output', 'agent_stop', 'agent_send'] as const;

/** Options of {@link createMcpServer}. */
export interface CreateMcpServerOptions {
  cadre: Cadre;
  /** The parent session whose runs this server starts and reads. */
  sessionId: string;
  /** The session's delegation tools. */
  tools: ToolSet;
  /** The run-backed task store shared by every connection. */
  taskStore: TaskStore;
  /** cadre's version, as the server's. */
  version: string;
  /** Makes the id of each tool call (the `tool_call_id` of the runs it starts). @default timeSortedId */
  newId?: NewId;
}

/** What hosts read about the server once connected. */
const instructions = [
  'cadre runs subagents as stored, schedulable runs. Delegate with agent (or agent_parallel); pass run_in_background: true for long work, then read it with agent_output.',
  'Runs go on between calls and after you disconnect; agent_list shows them, agent_send sends one a message (a follow-up once it finished), agent_stop stops one. A finished background run is announced as a log message.',
].join(' ');

/**
 * One MCP server (one connection) over cadre's delegation tools, with the inputs and outputs of
 * docs/runs-and-limits.md. `agent` may also be called as a task (revision 2025-11-25, `taskSupport:
 * optional`): the run starts in the background and the task id is its run id.
 */
export function createMcpServer({ cadre, sessionId, tools, taskStore, version, newId = timeSortedId }: CreateMcpServerOptions): Server {
  const server = new Server(
    { name: 'cadre', version },
    {
      capabilities: { tools: {}, logging: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      instructions,
    },
  );
  let listing: Promise<McpTool[]> | undefined;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await (listing ??= listTools(tools)) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult | CreateTaskResult> => {
    const { name, arguments: input = {} } = request.params;
    const toolCallId = newId('mcp');
    if (request.params.task) {
      if (name !== 'agent') throw new Error(`Only the agent tool runs as a task; call ${name} without a task.`);
      if (!extra.taskStore) throw new Error('Tasks are not available on this connection.');
      const started = await callDelegationTool(tools, 'agent', { ...input, run_in_background: true }, { toolCallId });
      const run = started.isError
        ? undefined
        : (await cadre.store.listRuns({ parent_session_id: sessionId })).find((candidate) => candidate.tool_call_id === toolCallId);
      if (!run) throw new Error(textOf(started));
      // A task id handed out survives a crash of this process: the run is committed first.
      await cadre.store.flush();
      return { task: await extra.taskStore.createTask({ ttl: null, pollInterval: 1000, context: { runId: run.id } }) };
    }
    const result = await callDelegationTool(tools, name, input, { signal: hostCancel(server, extra.signal), toolCallId });
    // So is a run id in an answer.
    await cadre.store.flush();
    return result;
  });
  return server;
}

async function listTools(tools: ToolSet): Promise<McpTool[]> {
  return Promise.all(
    mcpToolNames.map(async (name): Promise<McpTool> => {
      const tool = tools[name]!;
      const schema = (await asSchema(tool.inputSchema).jsonSchema) as McpTool['inputSchema'];
      return {
        name,
        description: (typeof tool.description === 'function' ? tool.description({ context: {} }) : tool.description) ?? name,
        inputSchema: { ...schema, type: 'object' },
        annotations: annotationsOf(name),
        ...(name === 'agent' ? { execution: { taskSupport: 'optional' as const } } : {}),
      };
    }),
  );
}

function annotationsOf(name: string): McpTool['annotations'] {
  const readOnly = name === 'agent_list' || name === 'agent_output';
  return { readOnlyHint: readOnly, destructiveHint: name === 'agent_stop', openWorldHint: !readOnly };
}

/**
 * The signal a call waits with: aborted when the host cancels the call, not when the connection
 * closes. A run the host started goes on after it disconnects (the SDK aborts every open request
 * then), so the host can read it when it comes back.
 */
function hostCancel(server: Server, requestSignal: AbortSignal): AbortSignal {
  const controller = new AbortController();
  requestSignal.addEventListener(
    'abort',
    () => {
      // The SDK aborts requests first, then drops the transport: look once it is done.
      setImmediate(() => {
        if (server.transport !== undefined) controller.abort(requestSignal.reason);
      });
    },
    { once: true },
  );
  return controller.signal;
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

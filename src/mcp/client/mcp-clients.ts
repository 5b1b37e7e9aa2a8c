import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolSet } from 'ai';
import { z } from 'zod';
import type { McpServerConfig } from '../../config/mcp-servers-config.ts';
import { defineTool, type ToolRisk } from '../../tools/define-tool.ts';
import { McpServerError } from './mcp-server-error.ts';
import { mcpToolName } from './mcp-tool-name.ts';

/** One MCP server cadre may use, with where it was configured. */
export interface McpServerEntry {
  config: McpServerConfig;
  /** Where it comes from, for reports: the configuration, a project's `.mcp.json`, an agent file. */
  source: string;
  /**
   * Whether its tool annotations are believed: a `readOnlyHint` makes a tool's risk `read`. Servers
   * of a project's `.mcp.json` run only once trusted, and never mark their own tools read-only.
   * @default true
   */
  trustAnnotations?: boolean;
}

/** Where one server stands in this process. */
export interface McpServerStatus {
  name: string;
  source: string;
  state: 'not started' | 'starting' | 'ready' | 'failed' | 'exited' | 'closed';
  /** Why it failed or exited. */
  error: string | null;
  /** Its tools, once listed. */
  tools: string[];
}

/** Options of {@link createMcpClients}. */
export interface McpClientsOptions {
  servers: Record<string, McpServerEntry>;
  /** How long one tool call may take. @default 120000 (or `MCP_TOOL_TIMEOUT`, as in Claude Code) */
  toolTimeoutMs?: number;
  /** How long a server may take to start and list its tools. @default 30000 (or `MCP_TIMEOUT`) */
  startTimeoutMs?: number;
  /** The environment stdio servers inherit (plus their own `env`). @default process.env */
  env?: Record<string, string | undefined>;
  /** The directory stdio servers start in, unless their `cwd` says otherwise. @default process.cwd() */
  cwd?: string;
  /** The client's name and version, sent to servers. */
  clientInfo?: { name: string; version: string };
  /** Where a server's stderr goes, line by line. @default dropped */
  onServerLog?: (server: string, line: string) => void;
}

/** The tools of the servers asked for, and the servers that could not give theirs. */
export interface McpToolsResult {
  tools: ToolSet;
  failures: McpServerError[];
}

/**
 * The MCP servers of one process: each starts once, when a run first needs it, is shared by every
 * run that uses it, and closes with the process ({@link McpClients.close}). A server that fails
 * to start or dies is reported; the others go on.
 */
export interface McpClients {
  /** The names of the servers configured. */
  readonly names: string[];
  /** The tools of these servers (started if need be), named `mcp__<server>__<tool>`. */
  tools(servers: readonly string[], extra?: Record<string, McpServerEntry>): Promise<McpToolsResult>;
  /** Where each server stands. */
  status(): McpServerStatus[];
  close(): Promise<void>;
}

interface Connection {
  entry: McpServerEntry;
  status: McpServerStatus;
  ready: Promise<{ client: Client; tools: McpTool[] }> | null;
  client: Client | null;
}

/** Creates the {@link McpClients} of a process; nothing starts until tools are asked for. */
export function createMcpClients(options: McpClientsOptions): McpClients {
  const env = options.env ?? process.env;
  const toolTimeoutMs = options.toolTimeoutMs ?? positive(env.MCP_TOOL_TIMEOUT) ?? 120_000;
  const startTimeoutMs = options.startTimeoutMs ?? positive(env.MCP_TIMEOUT) ?? 30_000;
  const connections = new Map<string, Connection>();
  let closed = false;

  function connectionOf(name: string, entry: McpServerEntry): Connection {
    let connection = connections.get(name);
    if (!connection) {
      connection = { entry, status: { name, source: entry.source, state: 'not started', error: null, tools: [] }, ready: null, client: null };
      connections.set(name, connection);
    }
    return connection;
  }
  for (const [name, entry] of Object.entries(options.servers)) connectionOf(name, entry);

  async function start(name: string, connection: Connection): Promise<{ client: Client; tools: McpTool[] }> {
    connection.status.state = 'starting';
    const [{ Client }, transport] = await Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), openTransport(name, connection.entry.config)]);
    const client = new Client(options.clientInfo ?? { name: 'cadre', version: '0' }, { capabilities: {} });
    client.onclose = () => {
      if (closed || connection.status.state === 'closed') return;
      connection.status.state = connection.status.state === 'starting' ? 'failed' : 'exited';
      connection.status.error ??= 'the server closed the connection (its process exited)';
    };
    const timeout = AbortSignal.timeout(startTimeoutMs);
    try {
      await client.connect(transport, { signal: timeout, timeout: startTimeoutMs });
      const tools: McpTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, { signal: timeout, timeout: startTimeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      connection.client = client;
      connection.status.state = 'ready';
      // What it wrote while starting was chatter, not a reason.
      connection.status.error = null;
      connection.status.tools = tools.map((tool) => mcpToolName(name, tool.name));
      return { client, tools };
    } catch (error) {
      await client.close().catch(() => {});
      const reason = timeout.aborted ? `it did not start within ${startTimeoutMs / 1000} s` : messageOf(error);
      connection.status.state = 'failed';
      connection.status.error =
        connection.status.error && connection.status.error !== 'the server closed the connection (its process exited)' ? connection.status.error : reason;
      throw new McpServerError(name, `MCP server '${name}' (${connection.entry.source}) failed to start: ${connection.status.error}`, { cause: error });
    }
  }

  async function openTransport(name: string, config: McpServerConfig) {
    if (config.type === 'http') {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} } });
    }
    const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const inherited = Object.fromEntries(Object.entries(env).filter((pair): pair is [string, string] => pair[1] !== undefined));
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: { ...getDefaultEnvironment(), ...inherited, ...config.env },
      cwd: config.cwd ?? options.cwd,
      stderr: 'pipe',
    });
    const connection = connections.get(name);
    let buffered = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        // The first line it wrote while starting usually says why it failed (the last is often a version banner).
        if (connection && connection.status.state !== 'ready' && connection.status.error === null)
          connection.status.error = `it said: ${line.trim().slice(0, 300)}`;
        options.onServerLog?.(name, line);
      }
    });
    return transport;
  }

  function toolsOf(name: string, connection: Connection, listed: McpTool[]): ToolSet {
    const tools: ToolSet = {};
    for (const tool of listed) {
      const toolName = mcpToolName(name, tool.name);
      const readOnly = tool.annotations?.readOnlyHint === true && connection.entry.trustAnnotations !== false;
      const risk: ToolRisk = readOnly ? 'read' : 'network';
      tools[toolName] = defineTool({
        name: toolName,
        description: describe(name, tool),
        inputSchema: inputSchemaOf(tool),
        risk,
        argument: (input) => argumentOf(input),
        execute: async (input, { abortSignal }) => {
          const client = connection.client;
          if (!client || connection.status.state !== 'ready') {
            throw new McpServerError(
              name,
              `MCP server '${name}' is not running (${connection.status.state}${connection.status.error ? `: ${connection.status.error}` : ''}); its tool ${tool.name} cannot be called. Do the task without it or say what you need.`,
            );
          }
          try {
            const result = (await client.callTool({ name: tool.name, arguments: input as Record<string, unknown> }, undefined, {
              signal: abortSignal,
              timeout: toolTimeoutMs,
              maxTotalTimeout: toolTimeoutMs,
            })) as CallToolResult;
            const text = renderResult(result);
            if (result.isError) throw new McpServerError(name, text || `${tool.name} failed without saying why.`);
            return text || '(the tool returned no content)';
          } catch (error) {
            if (McpServerError.isInstance(error)) throw error;
            if (abortSignal?.aborted) throw abortSignal.reason ?? error;
            const state = connection.status.state as McpServerStatus['state'];
            const gone = state === 'exited' || state === 'failed';
            const reason = gone
              ? `the server went away during the call (${connection.status.error ?? 'it exited'})`
              : /timed out/i.test(messageOf(error))
                ? `no answer within ${toolTimeoutMs / 1000} s`
                : messageOf(error);
            throw new McpServerError(name, `MCP tool ${tool.name} of server '${name}' failed: ${reason}.`, { cause: error });
          }
        },
      });
    }
    return tools;
  }

  return {
    get names() {
      return Object.keys(options.servers);
    },

    async tools(servers, extra = {}) {
      const result: McpToolsResult = { tools: {}, failures: [] };
      const wanted = [...servers.map((name) => [name, options.servers[name]] as const), ...Object.entries(extra)];
      await Promise.all(
        wanted.map(async ([name, entry]) => {
          if (!entry) return;
          const connection = connectionOf(name, entry);
          if (closed) return;
          connection.ready ??= start(name, connection);
          try {
            const { tools } = await connection.ready;
            if (connection.status.state !== 'ready') {
              result.failures.push(
                new McpServerError(name, `MCP server '${name}' (${entry.source}) is not running: ${connection.status.error ?? connection.status.state}.`),
              );
            }
            Object.assign(result.tools, toolsOf(name, connection, tools));
          } catch (error) {
            result.failures.push(McpServerError.isInstance(error) ? error : new McpServerError(name, messageOf(error)));
          }
        }),
      );
      return result;
    },

    status() {
      return [...connections.values()].map((connection) => ({ ...connection.status, tools: [...connection.status.tools] }));
    },

    async close() {
      closed = true;
      await Promise.all(
        [...connections.values()].map(async (connection) => {
          connection.status.state = 'closed';
          await connection.client?.close().catch(() => {});
        }),
      );
    },
  };
}

function describe(server: string, tool: McpTool): string {
  const what = tool.description?.trim() || tool.annotations?.title || tool.title || tool.name;
  return `${what}\n(Tool ${tool.name} of MCP server ${server}.)`;
}

/** The tool's own JSON schema as zod, so the model sees it and bad input comes back as a tool error. */
function inputSchemaOf(tool: McpTool): z.ZodType<Record<string, unknown>> {
  try {
    return z.fromJSONSchema(tool.inputSchema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<Record<string, unknown>>;
  } catch {
    return z.record(z.string(), z.unknown());
  }
}

/** What approvals and rules see of a call: its input as compact JSON. */
function argumentOf(input: unknown): string | undefined {
  if (input === null || typeof input !== 'object' || Object.keys(input).length === 0) return undefined;
  return JSON.stringify(input);
}

/** An MCP tool result as the text a model reads. */
function renderResult(result: CallToolResult): string {
  const parts = (result.content ?? []).map((part) => {
    switch (part.type) {
      case 'text':
        return part.text;
      case 'resource':
        return 'text' in part.resource ? String(part.resource.text) : `[resource ${part.resource.uri}]`;
      case 'resource_link':
        return `[resource ${part.uri}]`;
      default:
        return `[${part.type}${'mimeType' in part ? ` ${String(part.mimeType)}` : ''}]`;
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^MCP error -?\d+: /, '').split('\n')[0] ?? message;
}

function positive(value: string | undefined): number | undefined {
  const number = Number(value);
  return value !== undefined && Number.isFinite(number) && number > 0 ? number : undefined;
}

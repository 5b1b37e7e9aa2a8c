import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** Options of {@link serveMcpHttp}. */
export interface ServeMcpHttpOptions {
  /** The port on 127.0.0.1; 0 takes any free one. */
  port: number;
  /** Every request must carry `Authorization: Bearer <token>`. */
  token: string;
  /** A new MCP server for each client session (the hub and the task store are shared by all). */
  createServer: () => Server;
  onError?: (error: unknown) => void;
}

/** A running streamable HTTP endpoint. */
export interface McpHttpEndpoint {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves MCP over streamable HTTP on 127.0.0.1 only, at `/mcp`, and never open: this endpoint
 * starts agents that can run commands. A request without the bearer token gets 401; one from a web
 * page of another origin (an `Origin` other than this endpoint's), or naming another host (DNS
 * rebinding), gets 403. Each client session gets its own server; sessions end with DELETE or close.
 */
export async function serveMcpHttp({ port, token, createServer: makeServer, onError = () => {} }: ServeMcpHttpOptions): Promise<McpHttpEndpoint> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>();
  const expected = Buffer.from(`Bearer ${token}`);
  let origins: string[] = [];

  function refuse(response: ServerResponse, status: number, message: string): void {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (path !== '/mcp') return refuse(response, 404, 'Not found: the MCP endpoint is /mcp.');
    const given = Buffer.from(request.headers.authorization ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      response.setHeader('www-authenticate', 'Bearer');
      return refuse(response, 401, 'Unauthorized: send Authorization: Bearer <token> (CADRE_MCP_TOKEN, printed when cadre mcp --http starts).');
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !origins.includes(origin)) return refuse(response, 403, `Forbidden: requests from ${origin} are not accepted.`);
    if (!origins.some((allowed) => allowed === `http://${request.headers.host}`)) return refuse(response, 403, 'Forbidden: unknown Host.');
    const sessionId = request.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (known) return known.transport.handleRequest(request, response);
    if (typeof sessionId === 'string') return refuse(response, 404, 'Unknown MCP session: initialize a new one.');
    if (request.method !== 'POST') return refuse(response, 400, 'Start a session with an initialize request (POST).');
    const server = makeServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(request, response);
  }

  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      onError(error);
      if (!response.headersSent) refuse(response, 500, 'Internal error.');
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', () => resolve());
  });
  const address = http.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  origins = [`http://127.0.0.1:${bound}`, `http://localhost:${bound}`];
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    async close() {
      await Promise.all([...sessions.values()].map(({ server }) => server.close().catch(() => {})));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

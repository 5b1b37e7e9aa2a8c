import { z } from 'zod';

const nonEmpty = (what: string) =>
  z
    .string({ error: `must be ${what}` })
    .trim()
    .min(1, { error: `must be ${what}` });
const stringMap = (what: string) =>
  z.record(z.string(), z.string({ error: `values must be strings (${what})` }), { error: `must map names to strings (${what})` });

/** A server started as a child process that speaks MCP over stdio (Claude Desktop's and Claude Code's format). */
export const stdioMcpServerSchema = z.strictObject({
  type: z.literal('stdio').optional(),
  command: nonEmpty('the command that starts the server, like "npx"'),
  args: z.array(z.string({ error: 'must be strings' }), { error: 'must be a list of arguments' }).optional(),
  env: stringMap('environment variables').optional(),
  cwd: nonEmpty('a directory').optional(),
});

/** A server reached over streamable HTTP. */
export const httpMcpServerSchema = z.strictObject({
  type: z.literal('http', { error: 'must be "http" (streamable HTTP) or "stdio"' }),
  url: nonEmpty('a URL like https://example.com/mcp').refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    error: 'must be an http(s) URL like https://example.com/mcp',
  }),
  headers: stringMap('HTTP headers').optional(),
});

/** One entry of `mcpServers`. */
export const mcpServerConfigSchema = z.union([httpMcpServerSchema, stdioMcpServerSchema], {
  error: 'must be {"command", "args", "env"} (stdio) or {"type": "http", "url", "headers"}',
});

/** `mcpServers`: server name → how to reach it. Names become part of tool names (`mcp__<name>__<tool>`). */
export const mcpServersSchema = z.record(z.string(), mcpServerConfigSchema).superRefine((servers, context) => {
  for (const name of Object.keys(servers)) {
    if (!/^[A-Za-z0-9_-]{1,40}$/.test(name))
      context.addIssue({ code: 'custom', path: [name], message: 'server names must be 1 to 40 letters, digits, "-" or "_"' });
  }
});

/** A stdio MCP server's configuration. */
export type StdioMcpServerConfig = z.infer<typeof stdioMcpServerSchema>;
/** An HTTP MCP server's configuration. */
export type HttpMcpServerConfig = z.infer<typeof httpMcpServerSchema>;
/** One configured MCP server. */
export type McpServerConfig = StdioMcpServerConfig | HttpMcpServerConfig;

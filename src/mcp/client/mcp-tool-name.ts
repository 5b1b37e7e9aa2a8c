/** Longest tool name model providers accept. */
const maxToolName = 64;

/**
 * The name cadre gives a server's tool: `mcp__<server>__<tool>`, as Claude Code names them, with
 * characters providers refuse in tool names replaced by `_`, at most 64 characters.
 * @example mcpToolName('github', 'create_issue') // 'mcp__github__create_issue'
 */
export function mcpToolName(server: string, tool: string): string {
  const clean = (part: string) => part.replace(/[^A-Za-z0-9_-]/g, '_');
  return `mcp__${clean(server)}__${clean(tool)}`.slice(0, maxToolName);
}

/**
 * The servers a tool list needs started: every one when the list is absent (an agent without
 * `tools` gets all) or holds a pattern that can match any server's tools (`mcp__*`, `*`), else
 * the servers its `mcp__<server>...` entries name.
 */
export function serversNamedBy(names: readonly string[] | null, servers: readonly string[]): string[] {
  if (names === null) return [...servers];
  const wanted = new Set<string>();
  for (const name of names) {
    if (name.endsWith('*') && 'mcp__'.startsWith(name.slice(0, -1))) return [...servers];
    if (!name.startsWith('mcp__')) continue;
    const rest = name.slice(5);
    for (const server of servers) {
      const prefix = server.replace(/[^A-Za-z0-9_-]/g, '_');
      if (rest === prefix || rest.startsWith(`${prefix}__`) || (rest.endsWith('*') && `${prefix}__`.startsWith(rest.slice(0, -1)))) wanted.add(server);
    }
  }
  return servers.filter((server) => wanted.has(server));
}

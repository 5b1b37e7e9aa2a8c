import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { mcpServerConfigSchema, type McpServerConfig } from '../../config/mcp-servers-config.ts';

/** The file of a project that names its MCP servers, as Claude Code reads it. */
export const projectMcpFileName = '.mcp.json';

/** One server of a project's `.mcp.json`, and whether a person trusted it as it is now. */
export interface ProjectMcpServer {
  name: string;
  config: McpServerConfig;
  /** `trusted`; `new` (never trusted here); `changed` (trusted, but its definition changed since). */
  trust: 'trusted' | 'new' | 'changed';
  /** What identifies the definition a person trusted. */
  fingerprint: string;
}

/** What a project's `.mcp.json` holds. */
export interface ProjectMcpServers {
  /** Absolute path of the file. */
  path: string;
  servers: ProjectMcpServer[];
  /** Entries that could not be read, each with its name and why. */
  problems: string[];
}

/** Where a person's trust in project servers is kept: `<user config directory>/mcp-trust.json`. */
export function mcpTrustFile(userConfigDirectory: string): string {
  return join(userConfigDirectory, 'mcp-trust.json');
}

/** Trust file contents: project directory → server name → fingerprint of the trusted definition. */
type TrustRecord = Record<string, Record<string, string>>;

async function readTrust(path: string): Promise<TrustRecord> {
  try {
    const data = JSON.parse(await readFile(path, 'utf8')) as unknown;
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as TrustRecord) : {};
  } catch {
    return {};
  }
}

/** The identity of a server definition: a change to its command, arguments, URL or environment needs trust again. */
function fingerprintOf(config: McpServerConfig): string {
  return createHash('sha256').update(canonical(config)).digest('hex').slice(0, 32);
}

/** JSON with keys in sorted order, so the same definition always gives the same fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * `${VAR}` and `${VAR:-default}` in a value, from the environment, as Claude Code expands them in
 * `.mcp.json` (so a committed file can name a key without holding it).
 */
function expand(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback: string | undefined) => env[name] ?? fallback ?? '');
}

function expandConfig(config: McpServerConfig, env: Record<string, string | undefined>): McpServerConfig {
  const map = (record: Record<string, string> | undefined) => (record ? Object.fromEntries(Object.entries(record).map(([key, value]) => [key, expand(value, env)])) : undefined);
  if (config.type === 'http') return { ...config, url: expand(config.url, env), ...(config.headers ? { headers: map(config.headers) } : {}) };
  return { ...config, command: expand(config.command, env), ...(config.args ? { args: config.args.map((arg) => expand(arg, env)) } : {}), ...(config.env ? { env: map(config.env) } : {}) };
}

/**
 * Reads the project's `.mcp.json` (in `cwd`) and says which servers a person trusted. The trust
 * is checked on the definition as written (before `${VAR}` expansion), so a changed command needs
 * trust again. Returns null when there is no such file.
 */
export async function readProjectMcpServers({ cwd, userConfigDirectory, env = process.env }: { cwd: string; userConfigDirectory: string; env?: Record<string, string | undefined> }): Promise<ProjectMcpServers | null> {
  const path = resolve(cwd, projectMcpFileName);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return null;
  }
  const problems: string[] = [];
  let entries: Record<string, unknown> = {};
  try {
    const data = JSON.parse(text) as { mcpServers?: unknown };
    if (typeof data.mcpServers === 'object' && data.mcpServers !== null && !Array.isArray(data.mcpServers)) entries = data.mcpServers as Record<string, unknown>;
    else problems.push('mcpServers: must be an object of servers, like { "mcpServers": { "name": { "command": "..." } } }');
  } catch (error) {
    problems.push(`invalid JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const trusted = (await readTrust(mcpTrustFile(userConfigDirectory)))[resolve(cwd)] ?? {};
  const servers: ProjectMcpServer[] = [];
  for (const [name, raw] of Object.entries(entries)) {
    const parsed = mcpServerConfigSchema.safeParse(raw);
    if (!/^[A-Za-z0-9_-]{1,40}$/.test(name)) problems.push(`${name}: server names must be 1 to 40 letters, digits, "-" or "_"`);
    else if (!parsed.success) problems.push(`${name}: ${z.prettifyError(parsed.error).replace(/\s*\n\s*/g, ' ')}`);
    else {
      const fingerprint = fingerprintOf(parsed.data);
      const trust = trusted[name] === fingerprint ? 'trusted' : trusted[name] === undefined ? 'new' : 'changed';
      servers.push({ name, config: trust === 'trusted' ? expandConfig(parsed.data, env) : parsed.data, trust, fingerprint });
    }
  }
  return { path, servers, problems };
}

/** Records a person's trust in these servers of the project, as they are defined now. */
export async function trustProjectMcpServers({ cwd, userConfigDirectory, servers }: { cwd: string; userConfigDirectory: string; servers: readonly ProjectMcpServer[] }): Promise<string> {
  const file = mcpTrustFile(userConfigDirectory);
  const record = await readTrust(file);
  const project = (record[resolve(cwd)] ??= {});
  for (const server of servers) project[server.name] = server.fingerprint;
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, file);
  return file;
}

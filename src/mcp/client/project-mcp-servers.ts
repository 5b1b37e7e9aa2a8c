import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { mcpServerConfigSchema, type McpServerConfig } from '../../config/mcp-servers-config.ts';
import { mcpServerItem } from '../../config/workspace-config.ts';
import { canonicalJson, grantApplies, grantHash, partState, readWorkspaceTrust, type WorkspaceGrant } from '../../config/workspace-trust.ts';

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
  /**
   * The file as workspace trust sees it: `trusted` when `cadre trust` trusted it as it is (or
   * `cadre mcp trust` trusted every server), `once` under `--trust`.
   */
  grant: WorkspaceGrant;
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

const canonical = canonicalJson;

/**
 * `${VAR}` and `${VAR:-default}` in a value, from the environment, as Claude Code expands them in
 * `.mcp.json` (so a committed file can name a key without holding it).
 */
function expand(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback: string | undefined) => env[name] ?? fallback ?? '');
}

function expandConfig(config: McpServerConfig, env: Record<string, string | undefined>): McpServerConfig {
  const map = (record: Record<string, string> | undefined) =>
    record ? Object.fromEntries(Object.entries(record).map(([key, value]) => [key, expand(value, env)])) : undefined;
  if (config.type === 'http') return { ...config, url: expand(config.url, env), ...(config.headers ? { headers: map(config.headers) } : {}) };
  return {
    ...config,
    command: expand(config.command, env),
    ...(config.args ? { args: config.args.map((arg) => expand(arg, env)) } : {}),
    ...(config.env ? { env: map(config.env) } : {}),
  };
}

/**
 * Reads the project's `.mcp.json` (in `cwd`) and says which servers a person trusted: all of
 * them when the workspace is trusted with this file as it is (`cadre trust`) or `once` (`--trust`,
 * `CADRE_TRUST=1`), else each one `cadre mcp trust` trusted. The trust is checked on the
 * definition as written (before `${VAR}` expansion), so a changed command needs trust again.
 * Returns null when there is no such file.
 */
export async function readProjectMcpServers({
  cwd,
  userConfigDirectory,
  env = process.env,
  once = false,
}: {
  cwd: string;
  userConfigDirectory: string;
  env?: Record<string, string | undefined>;
  once?: boolean;
}): Promise<ProjectMcpServers | null> {
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
    if (typeof data.mcpServers === 'object' && data.mcpServers !== null && !Array.isArray(data.mcpServers))
      entries = data.mcpServers as Record<string, unknown>;
    else problems.push('mcpServers: must be an object of servers, like { "mcpServers": { "name": { "command": "..." } } }');
  } catch (error) {
    problems.push(`invalid JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const trusted = (await readTrust(mcpTrustFile(userConfigDirectory)))[resolve(cwd)] ?? {};
  const valid: Record<string, McpServerConfig> = {};
  for (const [name, raw] of Object.entries(entries)) {
    const parsed = mcpServerConfigSchema.safeParse(raw);
    if (!/^[A-Za-z0-9_-]{1,40}$/.test(name)) problems.push(`${name}: server names must be 1 to 40 letters, digits, "-" or "_"`);
    else if (!parsed.success) problems.push(`${name}: ${z.prettifyError(parsed.error).replace(/\s*\n\s*/g, ' ')}`);
    else valid[name] = parsed.data;
  }
  const hash = Object.keys(valid).length === 0 ? null : grantHash(valid);
  const record = hash === null ? null : await readWorkspaceTrust({ cwd, userConfigDirectory });
  let state = partState(hash, record?.parts['.mcp.json'], once);
  const whole = state !== 'none' && grantApplies(state);
  const servers: ProjectMcpServer[] = Object.entries(valid).map(([name, config]) => {
    const fingerprint = fingerprintOf(config);
    const trust = whole || trusted[name] === fingerprint ? 'trusted' : trusted[name] === undefined ? 'new' : 'changed';
    return { name, config: trust === 'trusted' ? expandConfig(config, env) : config, trust, fingerprint };
  });
  // `cadre mcp trust` of every server trusts the file as much as `cadre trust` does.
  if (!whole && servers.length > 0 && servers.every((server) => server.trust === 'trusted')) state = 'trusted';
  const items = Object.entries(valid).map(([name, config]) => mcpServerItem(`${projectMcpFileName} ${name}`, config));
  return { path, servers, problems, grant: { part: '.mcp.json', items, hash, state } };
}

/** Forgets `cadre mcp trust`'s trust in the servers of the project in `cwd`; returns whether there was any. */
export async function forgetProjectMcpServers({ cwd, userConfigDirectory }: { cwd: string; userConfigDirectory: string }): Promise<boolean> {
  const file = mcpTrustFile(userConfigDirectory);
  const record = await readTrust(file);
  if (!(resolve(cwd) in record)) return false;
  delete record[resolve(cwd)];
  await writeRecord(file, record);
  return true;
}

/** Records a person's trust in these servers of the project, as they are defined now. */
export async function trustProjectMcpServers({
  cwd,
  userConfigDirectory,
  servers,
}: {
  cwd: string;
  userConfigDirectory: string;
  servers: readonly ProjectMcpServer[];
}): Promise<string> {
  const file = mcpTrustFile(userConfigDirectory);
  const record = await readTrust(file);
  const project = (record[resolve(cwd)] ??= {});
  for (const server of servers) project[server.name] = server.fingerprint;
  await writeRecord(file, record);
  return file;
}

async function writeRecord(file: string, record: TrustRecord): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, file);
}

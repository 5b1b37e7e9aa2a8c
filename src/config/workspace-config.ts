import { defaultLimits, type Limits } from './limits.ts';
import type { McpServerConfig } from './mcp-servers-config.ts';
import type { ConfigFile } from './read-config-file.ts';
import type { GrantItem } from './workspace-trust.ts';

/** A workspace's config file cut in two: what applies always, and what needs a person's trust. */
export interface WorkspaceConfigSplit {
  /** What applies without trust: settings that start nothing, send nothing elsewhere and widen nothing, and what narrows. */
  narrowing: ConfigFile;
  /** What needs trust, as written; null when nothing does. Its hash is what a person trusts. */
  grant: Record<string, unknown> | null;
  /** What {@link grant} would allow, for a person. */
  items: GrantItem[];
}

/** Keys that neither start a program, send anything elsewhere nor widen what runs. */
const harmlessKeys = new Set(['$schema', 'model', 'modelAliases', 'summarize', 'agents', 'worktree']);

/** A database spec that is a URL (postgres://): the data would go to another host. */
const isUrl = (value: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(value);

/** An MCP server, for a person: the program and its arguments, or where requests go and which headers they carry. */
export function describeMcpServer(config: McpServerConfig | Readonly<Record<string, unknown>>): GrantItem['value'] {
  const server = config as Record<string, unknown>;
  if (server.type === 'http' || typeof server.url === 'string') {
    const headers = Object.keys((server.headers as Record<string, string> | undefined) ?? {});
    return `${String(server.url)}${headers.length > 0 ? ` (headers ${headers.join(', ')})` : ''}`;
  }
  const args = Array.isArray(server.args)
    ? server.args.map((arg) => (/^[\w@%+=:,./-]+$/.test(String(arg)) ? String(arg) : `'${String(arg).replaceAll("'", "'\\''")}'`))
    : [];
  return [String(server.command), ...args].join(' ');
}

/** The item an MCP server adds: a program it starts, or a host it sends requests (and headers) to. */
export function mcpServerItem(key: string, config: McpServerConfig | Readonly<Record<string, unknown>>): GrantItem {
  const http = (config as Record<string, unknown>).type === 'http' || typeof (config as Record<string, unknown>).url === 'string';
  return { kind: http ? 'credentials' : 'program', key, value: describeMcpServer(config) };
}

/**
 * Cuts a workspace's `cadre.config.json` into what applies untrusted and what needs trust
 * (docs/configuration.md, docs/security.md). Needs trust: `mcpServers` (they start programs or send headers),
 * `baseURL` (where the provider key goes), `queue`, a `db` URL and `telemetry` (where runs' data
 * goes), `permissions.allow`, sandbox openings (`mode` other than `required`, `network: true`,
 * `writable`), limits above the defaults, and any key not known to be harmless (harnesses start
 * programs). Applies always: `model`, `modelAliases`, `summarize`, `agents`, a `db` file,
 * `deny` and `ask` rules, `sandbox.mode: required`, `network: false`, and limits at or under the
 * defaults (the loader keeps the lower of them and the user's).
 */
export function splitWorkspaceConfig(file: ConfigFile): WorkspaceConfigSplit {
  const narrowing: Record<string, unknown> = {};
  const grant: Record<string, unknown> = {};
  const items: GrantItem[] = [];
  for (const [key, value] of Object.entries(file) as [string, unknown][]) {
    if (value === undefined) continue;
    if (harmlessKeys.has(key) || (key === 'db' && !isUrl(String(value)))) narrowing[key] = value;
    else if (key === 'permissions') splitPermissions(value as NonNullable<ConfigFile['permissions']>, narrowing, grant, items);
    else if (key === 'sandbox') splitSandbox(value as NonNullable<ConfigFile['sandbox']>, narrowing, grant, items);
    else if (key === 'limits') splitLimits(value as Partial<Limits>, narrowing, grant, items);
    else if (key === 'mcpServers') {
      grant[key] = value;
      for (const [name, server] of Object.entries(value as Record<string, McpServerConfig>)) items.push(mcpServerItem(`mcpServers.${name}`, server));
    } else if (key === 'baseURL' || key === 'queue' || key === 'db') {
      grant[key] = value;
      items.push({ kind: 'credentials', key, value: String(value) });
    } else if (key === 'telemetry') {
      grant[key] = value;
      const endpoint = (value as { endpoint?: string }).endpoint;
      items.push({ kind: 'credentials', key, value: endpoint ?? 'traces to OTEL_EXPORTER_OTLP_ENDPOINT' });
    } else {
      grant[key] = value;
      items.push({ kind: key === 'harnesses' ? 'program' : 'other', key, value: JSON.stringify(value) });
    }
  }
  return { narrowing: narrowing as ConfigFile, grant: Object.keys(grant).length === 0 ? null : grant, items };
}

function splitPermissions(
  permissions: NonNullable<ConfigFile['permissions']>,
  narrowing: Record<string, unknown>,
  grant: Record<string, unknown>,
  items: GrantItem[],
) {
  const { allow, ...narrowed } = permissions;
  if (Object.keys(narrowed).length > 0) narrowing.permissions = narrowed;
  if (allow !== undefined && allow.length > 0) {
    grant.permissions = { allow };
    items.push({ kind: 'rule', key: 'permissions.allow', value: allow.join(', ') });
  }
}

function splitSandbox(sandbox: NonNullable<ConfigFile['sandbox']>, narrowing: Record<string, unknown>, grant: Record<string, unknown>, items: GrantItem[]) {
  const narrowed: Record<string, unknown> = {};
  const opened: Record<string, unknown> = {};
  if (sandbox.mode === 'required') narrowed.mode = sandbox.mode;
  else if (sandbox.mode !== undefined) opened.mode = sandbox.mode;
  if (sandbox.network === false) narrowed.network = false;
  else if (sandbox.network !== undefined) opened.network = sandbox.network;
  if (sandbox.writable !== undefined && sandbox.writable.length > 0) opened.writable = sandbox.writable;
  if (Object.keys(narrowed).length > 0) narrowing.sandbox = narrowed;
  if (Object.keys(opened).length > 0) grant.sandbox = opened;
  for (const [key, value] of Object.entries(opened))
    items.push({ kind: 'sandbox', key: `sandbox.${key}`, value: Array.isArray(value) ? value.join(', ') : String(value) });
}

function splitLimits(limits: Partial<Limits>, narrowing: Record<string, unknown>, grant: Record<string, unknown>, items: GrantItem[]) {
  const lower: Record<string, unknown> = {};
  const higher: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(limits) as [keyof Limits, number | undefined][]) {
    if (value === undefined) continue;
    const standard = defaultLimits[key];
    // A limit that is "none" by default only narrows when set; one cadre does not know needs trust.
    if (key in defaultLimits && (standard === undefined || value <= standard)) lower[key] = value;
    else {
      higher[key] = value;
      items.push({ kind: 'limit', key: `limits.${key}`, value: `${value} (default ${standard})` });
    }
  }
  if (Object.keys(lower).length > 0) narrowing.limits = lower;
  if (Object.keys(higher).length > 0) grant.limits = higher;
}

/** Limits of an untrusted workspace: each the lower of its value and the user's (or the default). */
export function lowerLimits(workspace: Partial<Limits> | undefined, user: Partial<Limits> | undefined): Partial<Limits> | undefined {
  if (workspace === undefined) return undefined;
  const lowered: Partial<Limits> = {};
  for (const [key, value] of Object.entries(workspace) as [keyof Limits, number][]) {
    const base = user?.[key] ?? defaultLimits[key];
    lowered[key] = base === undefined ? value : Math.min(base, value);
  }
  return lowered;
}

import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors/config-error.ts';

/**
 * The parts of a workspace's own configuration that need a person's trust (docs/security.md):
 * its `cadre.config.json`, its `.mcp.json`, and the MCP servers its agent files define.
 */
export type WorkspacePart = 'cadre.config.json' | '.mcp.json' | 'agents';

/**
 * Where a part stands: `none` (nothing in it needs trust), `trusted` (a person trusted this exact
 * content), `once` (trusted for this command by `--trust` or `CADRE_TRUST=1`), `untrusted` (never
 * trusted here), `changed` (trusted, but its content changed since).
 */
export type WorkspaceTrustState = 'none' | 'trusted' | 'once' | 'untrusted' | 'changed';

/** What trusting a part would allow, one entry per thing it adds. */
export interface GrantItem {
  /** `program`: starts one; `credentials`: sends data or keys somewhere; `rule`: an allow rule; `sandbox`: an opening; `limit`: a higher limit; `other`. */
  kind: 'program' | 'credentials' | 'rule' | 'sandbox' | 'limit' | 'other';
  /** Where it is written, like `mcpServers.evil` or `permissions.allow`. */
  key: string;
  /** What it does, for a person: `sh -c 'touch x'`, `http://host/v1`, `bash, write`. */
  value: string;
}

/** One part of a workspace's configuration as trust sees it. */
export interface WorkspaceGrant {
  part: WorkspacePart;
  /** What trusting it allows; empty when nothing in it needs trust. */
  items: GrantItem[];
  /** The hash of its content that needs trust; null when there is none. */
  hash: string | null;
  state: WorkspaceTrustState;
}

/** Where a person's trust in workspaces is kept: `<user config directory>/trust.json`, beside `mcp-trust.json`. */
export function workspaceTrustFile(userConfigDirectory: string): string {
  return join(userConfigDirectory, 'trust.json');
}

/** A trusted workspace: its parts' hashes as they were trusted, and when. */
export interface WorkspaceTrustRecord {
  parts: Partial<Record<WorkspacePart, string>>;
  /** ISO time of the trust. */
  trustedAt: string;
}

type TrustFile = { workspaces: Record<string, WorkspaceTrustRecord> };

async function readTrustFile(path: string): Promise<TrustFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return { workspaces: {} };
    throw new ConfigError(`${path}: cannot read the workspace trust file: ${(error as Error).message}`, { cause: error });
  }
  try {
    const data = JSON.parse(text) as Partial<TrustFile>;
    // A broken file trusts nothing, which is the safe reading.
    return typeof data.workspaces === 'object' && data.workspaces !== null && !Array.isArray(data.workspaces)
      ? { workspaces: data.workspaces }
      : { workspaces: {} };
  } catch {
    return { workspaces: {} };
  }
}

async function writeTrustFile(path: string, file: TrustFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

/** What a person trusted of the workspace at `cwd`, or null. */
export async function readWorkspaceTrust({ cwd, userConfigDirectory }: { cwd: string; userConfigDirectory: string }): Promise<WorkspaceTrustRecord | null> {
  const file = await readTrustFile(workspaceTrustFile(userConfigDirectory));
  return file.workspaces[resolve(cwd)] ?? null;
}

/**
 * Records a person's trust in the workspace at `cwd` as it is now: the hash of each part that
 * needs trust. A later change to a part makes that part untrusted again.
 * @returns the trust file's path
 */
export async function recordWorkspaceTrust({
  cwd,
  userConfigDirectory,
  grants,
  now = () => new Date(),
}: {
  cwd: string;
  userConfigDirectory: string;
  grants: readonly WorkspaceGrant[];
  now?: () => Date;
}): Promise<string> {
  const path = workspaceTrustFile(userConfigDirectory);
  const file = await readTrustFile(path);
  const parts: WorkspaceTrustRecord['parts'] = {};
  for (const grant of grants) if (grant.hash !== null) parts[grant.part] = grant.hash;
  file.workspaces[resolve(cwd)] = { parts, trustedAt: now().toISOString() };
  await writeTrustFile(path, file);
  return path;
}

/**
 * Forgets the trust in the workspace at `cwd`.
 * @returns whether there was any
 */
export async function revokeWorkspaceTrust({ cwd, userConfigDirectory }: { cwd: string; userConfigDirectory: string }): Promise<boolean> {
  const path = workspaceTrustFile(userConfigDirectory);
  const file = await readTrustFile(path);
  if (!(resolve(cwd) in file.workspaces)) return false;
  delete file.workspaces[resolve(cwd)];
  await writeTrustFile(path, file);
  return true;
}

/** JSON with keys in sorted order, so the same content always gives the same hash. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The hash of what a part would allow (its content in canonical JSON). */
export function grantHash(content: unknown): string {
  return createHash('sha256').update(canonicalJson(content)).digest('hex');
}

/**
 * Whether this command trusts the workspace by itself: `--trust`, or `CADRE_TRUST` set to 1
 * (also `true`, `yes`).
 * @throws {ConfigError} for another value of `CADRE_TRUST`, so a typo does not pass for either answer
 */
export function trustedForCommand(flag: boolean | undefined, env: Record<string, string | undefined>): boolean {
  if (flag === true) return true;
  const value = env.CADRE_TRUST?.trim().toLowerCase();
  if (value === undefined || value === '' || value === '0' || value === 'false' || value === 'no') return false;
  if (value === '1' || value === 'true' || value === 'yes') return true;
  throw new ConfigError(`CADRE_TRUST must be 1 (trust this workspace's configuration for this command) or 0, not '${env.CADRE_TRUST}'.`);
}

/** Where a part stands, from its hash now, the recorded one, and whether this command trusts it by itself. */
export function partState(hash: string | null, recorded: string | undefined, once: boolean): WorkspaceTrustState {
  if (hash === null) return 'none';
  if (recorded === hash) return 'trusted';
  if (once) return 'once';
  return recorded === undefined ? 'untrusted' : 'changed';
}

/** Whether a part's content applies. */
export function grantApplies(state: WorkspaceTrustState): boolean {
  return state === 'none' || state === 'trusted' || state === 'once';
}

/** The workspace's state from its parts': untrusted or changed when any part is, once when any is, else trusted, else none. */
export function workspaceState(grants: readonly WorkspaceGrant[]): WorkspaceTrustState {
  const states = grants.map((grant) => grant.state);
  for (const state of ['changed', 'untrusted', 'once', 'trusted'] as const) if (states.includes(state)) return state;
  return 'none';
}

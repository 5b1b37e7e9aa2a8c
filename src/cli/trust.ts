import { configLocations } from '../config/config-locations.ts';
import { ConfigError } from '../errors/config-error.ts';
import { recordWorkspaceTrust, revokeWorkspaceTrust, type GrantItem } from '../config/workspace-trust.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { RuntimeFlags } from './command-options.ts';
import { agentPlacesOf, loadCliConfig, mcpServersOf } from './open-runtime.ts';
import { workspaceTrust, type WorkspaceTrust } from './workspace-trust-lines.ts';

/** Options of `cadre trust`. */
export interface TrustFlags extends RuntimeFlags {
  /** Forget the trust in this workspace instead. */
  revoke?: boolean;
  /** Only say where the workspace stands. */
  show?: boolean;
}

/** The headings of what a workspace's configuration would allow, in the order shown. */
const headings: Record<GrantItem['kind'], string> = {
  program: 'start programs',
  credentials: 'send data, keys or headers to',
  rule: 'add allow rules',
  sandbox: 'open the sandbox',
  limit: 'raise limits',
  other: 'set',
};

const stateWords = {
  none: 'nothing in its configuration needs trust',
  trusted: 'trusted',
  once: 'trusted for this command only',
  untrusted: 'not trusted',
  changed: 'changed since it was trusted',
} as const;

/** The workspace's parts as they stand, read as if `--trust` and `CADRE_TRUST` were not given. */
async function readWorkspace(context: CliContext, flags: TrustFlags): Promise<WorkspaceTrust> {
  const plain = { ...context, env: { ...context.env, CADRE_TRUST: undefined } };
  const settled = { ...flags, trust: false };
  const config = await loadCliConfig(plain, settled);
  const { loadAgents } = await import('../agents/load-agents.ts');
  const agents = await loadAgents(agentPlacesOf(plain, settled, config));
  const mcp = await mcpServersOf(plain, settled, config, false);
  return workspaceTrust(context.cwd, [config.workspace, mcp.grant, agents.workspace]);
}

function writeGrants(context: CliContext, trust: WorkspaceTrust): void {
  const items = trust.grants.flatMap((grant) => grant.items);
  for (const kind of Object.keys(headings) as GrantItem['kind'][]) {
    const ofKind = items.filter((item) => item.kind === kind);
    if (ofKind.length === 0) continue;
    writeLine(context.stdout, `  ${headings[kind]}:`);
    for (const item of ofKind) writeLine(context.stdout, `    ${item.key}: ${item.value}`);
  }
}

function toJson(trust: WorkspaceTrust, extra: Record<string, unknown> = {}) {
  return { workspace: trust.workspace, state: trust.state, parts: trust.grants.filter((grant) => grant.hash !== null), ...extra };
}

/**
 * `cadre trust`: shows what the workspace's own configuration would allow (programs it would
 * start, where it would send keys and data, rules and sandbox openings it would add) and records
 * a hash of that content in the user's configuration folder; running it is the consent. A later
 * change to that content makes it untrusted again. `--show` only says where it stands;
 * `--revoke` forgets the trust (`cadre mcp trust`'s for this workspace included).
 */
export async function trustCommand(context: CliContext, flags: TrustFlags): Promise<number> {
  if (flags.revoke && flags.show) throw new ConfigError('cadre trust takes --show or --revoke, not both.');
  const { userDirectory } = configLocations({ cwd: context.cwd, configFile: flags.config, env: context.env, home: context.env.HOME });
  if (flags.revoke) {
    const { forgetProjectMcpServers } = await import('../mcp/client/project-mcp-servers.ts');
    const revoked = await revokeWorkspaceTrust({ cwd: context.cwd, userConfigDirectory: userDirectory });
    const servers = await forgetProjectMcpServers({ cwd: context.cwd, userConfigDirectory: userDirectory });
    if (flags.json) writeLine(context.stdout, JSON.stringify({ workspace: context.cwd, revoked: revoked || servers }));
    else
      writeLine(
        context.stdout,
        revoked || servers
          ? `Forgot the trust in ${context.cwd}: its configuration's programs, keys and openings stay off until cadre trust.`
          : `${context.cwd} was not trusted: nothing to forget.`,
      );
    return 0;
  }
  const trust = await readWorkspace(context, flags);
  if (flags.show) {
    if (flags.json) writeLine(context.stdout, JSON.stringify(toJson(trust)));
    else {
      writeLine(context.stdout, `Workspace ${trust.workspace}: ${stateWords[trust.state]}`);
      for (const grant of trust.grants) if (grant.hash !== null) writeLine(context.stdout, `  ${grant.part}: ${stateWords[grant.state]}`);
      if (trust.state !== 'none') {
        writeLine(context.stdout, trust.state === 'trusted' ? 'Its configuration may:' : 'Trusting it would let its configuration:');
        writeGrants(context, trust);
      }
    }
    return 0;
  }
  if (trust.state === 'none') {
    if (flags.json) writeLine(context.stdout, JSON.stringify(toJson(trust, { file: null })));
    else
      writeLine(
        context.stdout,
        `Nothing in the configuration of ${trust.workspace} needs trust: it starts no program, sends nothing elsewhere and widens nothing.`,
      );
    return 0;
  }
  const file = await recordWorkspaceTrust({ cwd: context.cwd, userConfigDirectory: userDirectory, grants: trust.grants });
  const trusted = {
    ...trust,
    state: 'trusted' as const,
    grants: trust.grants.map((grant) => (grant.hash === null ? grant : { ...grant, state: 'trusted' as const })),
  };
  if (flags.json) writeLine(context.stdout, JSON.stringify(toJson(trusted, { file })));
  else {
    writeLine(context.stdout, `Workspace ${trust.workspace}: its configuration may now`);
    writeGrants(context, trust);
    writeLine(context.stdout, `Trusted, as recorded in ${file}. Any change to this content makes it untrusted again; cadre trust --revoke forgets it.`);
  }
  return 0;
}

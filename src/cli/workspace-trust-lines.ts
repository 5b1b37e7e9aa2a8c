import { grantApplies, workspaceState, type GrantItem, type WorkspaceGrant, type WorkspaceTrustState } from '../config/workspace-trust.ts';
import { writeLine, type CliContext } from './cli-context.ts';

/** A workspace's trust as a command sees it: its parts and where the whole stands. */
export interface WorkspaceTrust {
  /** The working directory. */
  workspace: string;
  state: WorkspaceTrustState;
  /** `cadre.config.json`, `.mcp.json` and the agent files' servers. */
  grants: WorkspaceGrant[];
}

/** The workspace's trust from its parts. */
export function workspaceTrust(workspace: string, grants: readonly WorkspaceGrant[]): WorkspaceTrust {
  return { workspace, state: workspaceState(grants), grants: [...grants] };
}

/** What was left out: the items of the parts that did not apply. */
export function leftOut(trust: WorkspaceTrust): GrantItem[] {
  return trust.grants.flatMap((grant) => (grantApplies(grant.state) ? [] : grant.items));
}

/** One item for a line: `mcpServers.evil (sh -c 'touch x')`, its value cut short. */
export function describeItem(item: GrantItem, width = 60): string {
  const value = item.value.length > width ? `${item.value.slice(0, width - 3)}...` : item.value;
  return `${item.key} (${value})`;
}

/** The workspace's trust in a few words, for `cadre agents` and the dashboard. */
export function describeWorkspaceTrust(trust: WorkspaceTrust): string {
  const left = leftOut(trust);
  switch (trust.state) {
    case 'none':
      return 'workspace: nothing in its configuration needs trust';
    case 'trusted':
      return left.length === 0
        ? 'workspace: trusted'
        : `workspace: trusted in part; left out ${left.map((item) => describeItem(item)).join(', ')} (cadre trust)`;
    case 'once':
      return 'workspace: trusted for this command only (--trust or CADRE_TRUST)';
    default:
      return `workspace: ${trust.state === 'changed' ? 'changed since trusted' : 'not trusted'}; left out ${left.map((item) => describeItem(item)).join(', ')} (see it: cadre trust --show; trust it: cadre trust)`;
  }
}

const announced = new WeakSet<CliContext>();

/**
 * Says once per command, in one line on stderr, what of the workspace's configuration was left
 * out and how to trust it, or that `--trust` trusts it for this command only. Nothing when there
 * is nothing to say.
 */
export function announceWorkspaceTrust(context: CliContext, trust: WorkspaceTrust): void {
  if (announced.has(context)) return;
  const once = trust.grants.filter((grant) => grant.state === 'once').flatMap((grant) => grant.items);
  const left = leftOut(trust);
  if (once.length === 0 && left.length === 0) return;
  announced.add(context);
  if (left.length > 0) {
    const why = trust.state === 'changed' ? 'changed since it was trusted' : 'is not trusted';
    writeLine(
      context.stderr,
      `cadre: this workspace's configuration ${why}, so cadre left out ${left.map((item) => describeItem(item)).join(', ')}; see it with: cadre trust --show; trust it with: cadre trust`,
    );
  } else {
    writeLine(
      context.stderr,
      `cadre: trusting this workspace's configuration for this command only (--trust or CADRE_TRUST): ${once.map((item) => describeItem(item)).join(', ')}`,
    );
  }
}

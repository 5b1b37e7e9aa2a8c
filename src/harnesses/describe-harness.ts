import type { AgentDefinition, HarnessName } from '../agents/agent-definition.ts';
import type { PermissionRisk } from '../permissions/permission-rule.ts';
import { compilePermissions, decidePermission, type PermissionsConfig } from '../permissions/permissions.ts';
import { displayName, findHarnessProgram, missingProgramMessage, programVersion, type HarnessCommands } from './find-harness-program.ts';
import { toolDecision } from './harness-approver.ts';
import { harnessDialects } from './harness-executor.ts';

/** A decision of cadre's rules as a harness agent's program meets it. */
export type HarnessDecision = 'allow' | 'ask' | 'deny';

/** What `cadre agents` says of a harness agent: its program, whether it was found, its version, and what it will be allowed. */
export interface HarnessReport {
  name: HarnessName;
  /** The command as configured (`harnesses.<name>.command`) or the program's name. */
  command: string;
  /** The program's path, where found. */
  path: string | null;
  found: boolean;
  /** What `--version` printed; null when not found or it did not answer. */
  version: string | null;
  allowed: {
    /** `each-call`: it asks cadre before each tool use; `before-start`: its sandbox is set from these before it starts. */
    asks: 'each-call' | 'before-start';
    /** Reading files (`read_file`): a program that cannot ask mid-run reads in any sandbox. */
    read: HarnessDecision;
    write: HarnessDecision;
    exec: HarnessDecision;
    network: HarnessDecision;
  };
  /** How to install it, when not found. */
  install: string | null;
}

/** Options of {@link describeHarness}. */
export interface DescribeHarnessOptions {
  commands: HarnessCommands;
  env: Record<string, string | undefined>;
  permissions?: PermissionsConfig;
}

/** Describes a harness agent's program for `cadre agents`; null for an agent of cadre's own loop. */
export async function describeHarness(agent: AgentDefinition, options: DescribeHarnessOptions): Promise<HarnessReport | null> {
  const dialect = agent.harness === undefined ? undefined : harnessDialects[agent.harness];
  if (!dialect) return null;
  const found = findHarnessProgram(dialect, options.commands, options.env.PATH);
  const version = found.path === null ? null : await programVersion(found.path, options.env);
  const rules = { rules: compilePermissions(options.permissions, 'permissions'), agentRules: compilePermissions(agent.permissions, `agent '${agent.name}'`) };
  // A program that asks mid-run is started with cadre's rules on each tool (docs/harnesses.md): a
  // tool some call of which may be asked about or denied asks; one every call of which is denied is taken away.
  const decision = (tool: string, risk: PermissionRisk) =>
    dialect.asksMidRun ? toolDecision(rules, tool, risk) : decidePermission(rules, { tool, risk, argument: undefined }).decision;
  return {
    name: dialect.name,
    command: found.command,
    path: found.path,
    found: found.path !== null,
    version,
    allowed: {
      asks: dialect.asksMidRun ? 'each-call' : 'before-start',
      read: decision('read_file', 'read'),
      write: decision('write_file', 'write'),
      exec: decision('bash', 'exec'),
      network: decision('web_fetch', 'network'),
    },
    install: found.path === null ? missingProgramMessage(dialect, found) : null,
  };
}

/** One line of `cadre agents` for a harness agent. */
export function describeHarnessLine(agent: string, report: HarnessReport): string {
  const program = displayName(report);
  if (!report.found) return `${agent}: ${report.install}`;
  const { asks, read, write, exec, network } = report.allowed;
  const how =
    asks === 'each-call' ? 'asks cadre before each tool use its rules do not allow outright' : `sandbox set before it starts (asked once where a rule asks)`;
  const reads = asks === 'each-call' ? `read ${read}, ` : '';
  return `${agent}: ${program}${report.version === null ? '' : ` ${report.version}`} at ${report.path}; ${how}: ${reads}write ${write}, exec ${exec}, network ${network}`;
}

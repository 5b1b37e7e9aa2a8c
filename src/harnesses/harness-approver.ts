import { isAbsolute, relative } from 'node:path';
import type { ApprovalBroker } from '../approvals/approval-broker.ts';
import { groupRules } from '../approvals/approval-broker.ts';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import type { PermissionCall, PermissionDecision, PermissionRisk } from '../permissions/permission-rule.ts';
import { compilePermissions, decidePermission, type DecidedRule, type PermissionLayers, type PermissionsConfig } from '../permissions/permissions.ts';
import { clampActivity, toolActivity } from '../runs/activity.ts';
import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { HarnessAllowance } from './harness-dialect.ts';
import type { HarnessApprover, HarnessExecutorOptions } from './harness-executor.ts';

/** The risk of each of cadre's tools a program's tool maps to; any other tool is rated `network`, as unknown tools are. */
const risks: Readonly<Record<string, PermissionRisk>> = {
  read_file: 'read',
  grep: 'read',
  list_files: 'read',
  write_file: 'write',
  edit_file: 'write',
  bash: 'exec',
};

/** Options of {@link createHarnessApprover}. */
export interface HarnessApproverOptions {
  store: Pick<Store, 'listSessionRules'>;
  broker: Pick<ApprovalBroker, 'request'>;
  /** The configuration's and the flags' rules. */
  permissions?: PermissionsConfig;
  /** The primary session of a run's parent session (asks and "always" rules are per primary session). */
  primarySessionOf: (sessionId: string) => Promise<string>;
  /** The folder the program works in: paths it names are read relative to it, as rules name them. */
  workspaceOf: (runId: string) => string;
}

/**
 * Answers a program's asks with cadre's rules, as for cadre's own tools (docs/tools-and-approvals.md):
 * its tool mapped to cadre's (`Bash` is `bash`, `Edit` is `edit_file`), the rules of the
 * configuration, the agent and the session decide, and a call they ask about is stored as an ask
 * a person answers (CLI, dashboard, API; `--yes` answers yes). The program's own settings play no part.
 */
export function createHarnessApprover(options: HarnessApproverOptions): HarnessApprover {
  const decide = createDecider(options);
  return async function approve(ask) {
    const { run, agent, tool, input, live } = ask;
    const argument = argumentOf(tool, input, options.workspaceOf(run.id));
    const request = { tool, risk: risks[tool] ?? 'network', argument };
    const { sessionId, verdict } = await decide(run, agent, request);
    const what = argument === undefined ? tool : `${tool} ${clampActivity(argument, 200)}`;
    if (verdict.decision === 'allow') return { allow: true };
    if (verdict.decision === 'deny') {
      live.setActivity({ kind: 'denied', tool, ...(argument === undefined ? {} : { argument: clampActivity(argument, 200) }), by: 'rule' });
      return {
        allow: false,
        message: `Permission denied by cadre: ${what} is denied ${verdict.rule === null ? 'by default' : `by the rule deny '${verdict.rule}'`}.`,
      };
    }
    live.setActivity({ kind: 'awaiting_approval', tool, ...(argument === undefined ? {} : { argument: clampActivity(argument, 200) }) });
    live.writePending();
    const approval = await options.broker.request(
      { sessionId, runId: run.id, agent: agent.name, tool, argument, risk: request.risk, summary: clampActivity(what, 200) },
      ask.signal,
    );
    if (approval.status === 'approved') {
      live.setActivity(toolActivity(ask.programTool, input));
      return { allow: true };
    }
    live.setActivity({
      kind: 'denied',
      tool,
      ...(argument === undefined ? {} : { argument: clampActivity(argument, 200) }),
      by: approval.resolved_by ?? 'person',
    });
    return { allow: false, message: `Permission denied by cadre: ${what} was not approved (${approval.resolved_by ?? 'person'}). Do not retry it unchanged.` };
  };
}

/** The configuration's, the agent's and the session's rules for a run, and its primary session. */
function createLayers(options: HarnessApproverOptions) {
  const rules = compilePermissions(options.permissions, 'permissions');
  const agentRules = new WeakMap<object, DecidedRule[]>();
  return async (run: RunRecord, agent: AgentDefinition): Promise<{ sessionId: string; layers: PermissionLayers }> => {
    let ownRules = agentRules.get(agent);
    if (!ownRules) agentRules.set(agent, (ownRules = compilePermissions(agent.permissions, `agent '${agent.name}'`)));
    const sessionId = await options.primarySessionOf(run.parent_session_id);
    const sessionRules = compilePermissions(groupRules(await options.store.listSessionRules(sessionId)), 'session rules');
    return { sessionId, layers: { rules, agentRules: ownRules, sessionRules } };
  };
}

/** Decides a call with the configuration's, the agent's and the session's rules. */
function createDecider(options: HarnessApproverOptions) {
  const layersOf = createLayers(options);
  return async (run: RunRecord, agent: AgentDefinition, request: PermissionCall) => {
    const { sessionId, layers } = await layersOf(run, agent);
    return { sessionId, verdict: decidePermission(layers, request) };
  };
}

/**
 * cadre's rules on the tools a program that asks mid-run would use without asking (Claude Code's
 * Read, its read-only Bash commands): for each of cadre's tools it names, `deny` where every call
 * of it is denied, `ask` where some call of it may be asked about or denied (each of its uses must
 * then come to cadre, which decides it with its argument), left out where every call is allowed.
 */
export function createHarnessToolRules(options: HarnessApproverOptions): NonNullable<HarnessExecutorOptions['toolRules']> {
  const layersOf = createLayers(options);
  return async (run, agent, tools) => {
    const { layers } = await layersOf(run, agent);
    const decided: Record<string, 'ask' | 'deny'> = {};
    for (const tool of tools) {
      const decision = toolDecision(layers, tool, risks[tool] ?? 'network');
      if (decision !== 'allow') decided[tool] = decision;
    }
    return decided;
  };
}

/**
 * What the rules say of every call of a tool: `deny` only where no rule with an argument pattern
 * could let one through, `allow` only where none could ask about or deny one, else `ask`.
 */
export function toolDecision(layers: PermissionLayers, tool: string, risk: PermissionRisk): PermissionDecision {
  const blanket = decidePermission(layers, { tool, risk }).decision;
  const patterns = [...layers.rules, ...(layers.agentRules ?? []), ...(layers.sessionRules ?? [])].filter(
    ({ rule }) => rule.kind === 'argument' && rule.tool === tool,
  );
  if (blanket === 'deny') return patterns.some(({ decision }) => decision !== 'deny') ? 'ask' : 'deny';
  if (blanket === 'ask') return 'ask';
  return patterns.some(({ decision }) => decision !== 'allow') ? 'ask' : 'allow';
}

/**
 * What a program that cannot ask mid-run (Codex) may do, from cadre's rules: writing in its
 * workspace (`write_file`, risk write) and running commands (`bash`, risk exec), each allowed,
 * denied, or, where a rule asks, asked of a person once before the program starts (one ask for
 * both); network only where a rule allows it outright.
 */
export function createHarnessAllowance(options: HarnessApproverOptions): NonNullable<HarnessExecutorOptions['allowance']> {
  const decide = createDecider(options);
  return async function allowance(run, agent, signal, live, cwd) {
    const write = await decide(run, agent, { tool: 'write_file', risk: 'write', argument: undefined });
    const exec = await decide(run, agent, { tool: 'bash', risk: 'exec', argument: undefined });
    const network = await decide(run, agent, { tool: 'web_fetch', risk: 'network', argument: undefined });
    const allowed: HarnessAllowance = {
      write: write.verdict.decision === 'allow',
      exec: exec.verdict.decision === 'allow',
      network: network.verdict.decision === 'allow',
    };
    const asked = [write.verdict.decision === 'ask' ? 'write files' : null, exec.verdict.decision === 'ask' ? 'run commands' : null].filter(
      (what) => what !== null,
    );
    if (asked.length === 0) return allowed;
    const program = agent.harness ?? 'program';
    // Where the program works: the run's worktree, for a run that has one.
    const argument = `${asked.join(' and ')} in ${cwd}`;
    live.setActivity({ kind: 'awaiting_approval', tool: program, argument: clampActivity(argument, 200) });
    live.writePending();
    const approval = await options.broker.request(
      {
        sessionId: write.sessionId,
        runId: run.id,
        agent: agent.name,
        tool: program,
        argument,
        risk: exec.verdict.decision === 'ask' ? 'exec' : 'write',
        summary: clampActivity(`${program}: ${argument} (its sandbox for the whole run; it cannot ask while it works)`, 200),
      },
      signal,
    );
    // Answered: the program starts and waits on its model until its first event says more.
    live.setActivity({ kind: 'waiting_for_model' });
    live.writePending();
    if (approval.status !== 'approved') return allowed;
    return { ...allowed, write: allowed.write || write.verdict.decision === 'ask', exec: allowed.exec || exec.verdict.decision === 'ask' };
  };
}

/** The argument rules match: a command, or a path relative to the workspace. */
function argumentOf(tool: string, input: Record<string, unknown>, workspace: string): string | undefined {
  const pick = (...keys: string[]) => keys.map((key) => input[key]).find((value): value is string => typeof value === 'string' && value !== '');
  if (tool === 'bash') return pick('command', 'cmd');
  const path = pick('file_path', 'path', 'notebook_path');
  if (path !== undefined) {
    const inside = isAbsolute(path) ? relative(workspace, path) : path;
    return inside.startsWith('..') || isAbsolute(inside) ? path : inside;
  }
  return pick('pattern', 'url', 'query');
}

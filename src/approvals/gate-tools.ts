import type { ToolExecutionOptions, ToolSet } from 'ai';
import { exactPattern, type PermissionRisk } from '../permissions/permission-rule.ts';
import { compilePermissions, decidePermission, type DecidedRule, type PermissionVerdict } from '../permissions/permissions.ts';
import { clampActivity, toolActivity, type RunActivity } from '../runs/activity.ts';
import type { ApprovalRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { toolInfo } from '../tools/define-tool.ts';
import { groupRules, type ApprovalBroker } from './approval-broker.ts';
import { ToolDeniedError } from './tool-denied-error.ts';

/**
 * The risk of a tool cadre knows nothing about (an AI SDK tool passed in `tools`, not made with
 * `defineTool`): `network`, as CONTRACT section 10 rates MCP tools. It asks by default.
 */
export const unknownToolRisk: PermissionRisk = 'network';

/** Who makes the calls of the tools {@link gateTools} wraps. */
export interface ToolGateContext {
  /** The primary session: its "always" rules apply. */
  sessionId: string;
  /** The run whose subagent calls the tools; null for the primary agent. */
  runId: string | null;
  agent: string;
  /** The agent's own rules, which can only make calls stricter. */
  agentRules?: readonly DecidedRule[];
  /** Shows the run's activity (`{kind: 'awaiting_approval', tool: 'bash', argument: 'npm test'}`). */
  setActivity?: (activity: RunActivity) => void;
  /** Writes the run's events held until the end of the event-loop turn, before the ask's own event. */
  writePending?: () => void;
}

/** What {@link gateTools} needs. */
export interface ToolGateServices {
  store: Store;
  broker: ApprovalBroker;
  /** The configuration's and the flags' rules. */
  rules: readonly DecidedRule[];
}

/**
 * Puts every tool behind the permission rules: a call the rules allow runs, one they deny comes
 * back to the model as a tool error saying what was denied and how a person can allow it, and one
 * that asks waits for exactly one answer (a person, `--yes`, no approver, the timeout or a stop).
 */
export function gateTools(tools: ToolSet, context: ToolGateContext, services: ToolGateServices): ToolSet {
  const gated: ToolSet = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute;
    if (!execute) {
      gated[name] = tool;
      continue;
    }
    const info = toolInfo(tool);
    const risk = info?.risk ?? unknownToolRisk;
    gated[name] = {
      ...tool,
      async execute(input: unknown, options: ToolExecutionOptions<any>) {
        // A call the tool refuses anyway (bad input, a path outside the workspace) is refused before
        // any rule or person is consulted: nobody should be asked to approve it.
        await info?.check(input);
        const argument = info?.argument(input);
        const call = { tool: name, risk, argument };
        let verdict = decidePermission({ rules: services.rules, agentRules: context.agentRules }, call);
        if (verdict.decision === 'ask') {
          // Rules a person set with "always" are read at each ask: another process may have added one.
          const sessionRules = compilePermissions(groupRules(await services.store.listSessionRules(context.sessionId)), 'session rules');
          verdict = decidePermission({ rules: services.rules, agentRules: context.agentRules, sessionRules }, call);
        }
        const summary = clampActivity(argument === undefined ? name : `${name} ${argument}`, 200);
        if (verdict.decision === 'deny') {
          context.setActivity?.({ kind: 'denied', ...toolAndArgument(name, argument), by: 'rule' });
          throw new ToolDeniedError(deniedByRule(name, argument, verdict));
        }
        if (verdict.decision === 'ask') {
          context.setActivity?.({ kind: 'awaiting_approval', ...toolAndArgument(name, argument) });
          // The ask's event is written straight away: the call's own events go first.
          context.writePending?.();
          const signal = options.abortSignal ?? new AbortController().signal;
          const approval = await services.broker.request({ sessionId: context.sessionId, runId: context.runId, agent: context.agent, tool: name, argument, risk, summary }, signal);
          if (approval.status !== 'approved') {
            if (approval.status === 'canceled') throw signal.reason ?? new Error('The run was stopped while it awaited approval.');
            context.setActivity?.({ kind: 'denied', ...toolAndArgument(name, argument), by: approval.resolved_by ?? 'person' });
            throw new ToolDeniedError(deniedAsk(approval));
          }
          context.setActivity?.(toolActivity(name, input));
        }
        return execute(input, options);
      },
    } as ToolSet[string];
  }
  return gated;
}

/** The tool and its argument as an activity shows them (the argument cut as the ask's summary is). */
function toolAndArgument(tool: string, argument: string | undefined): { tool: string; argument?: string } {
  return argument === undefined ? { tool } : { tool, argument: clampActivity(argument, 200) };
}

function what(tool: string, argument: string | undefined): string {
  return argument === undefined ? tool : `${tool} ${JSON.stringify(clampActivity(argument, 200))}`;
}

/** The rule a person would add to allow this very call. */
function allowRule(tool: string, argument: string | undefined): string {
  return argument === undefined || argument.trim() === '' ? tool : `${tool}(${exactPattern(argument.trim())})`;
}

function howToAllow(tool: string, argument: string | undefined): string {
  const rule = allowRule(tool, argument);
  return `A person can allow it with cadre run --allow '${rule}', or with "permissions": {"allow": ["${rule.replace(/["\\]/g, '\\$&')}"]} in cadre.config.json.`;
}

function deniedByRule(tool: string, argument: string | undefined, verdict: PermissionVerdict): string {
  const by = verdict.rule === null ? 'by default' : `by the rule deny '${verdict.rule}'`;
  return `Permission denied: ${what(tool, argument)} is denied ${by}. Do not retry it; do the task another way or say what you need. ${howToAllow(tool, argument)}`;
}

function deniedAsk(approval: ApprovalRecord): string {
  const call = what(approval.tool, approval.argument ?? undefined);
  const reason =
    approval.resolved_by === 'person'
      ? 'a person denied it'
      : approval.resolved_by === 'rule'
        ? 'a person denied it for the rest of the session'
        : approval.resolved_by === 'timeout'
          ? 'nobody answered the ask in time'
          : 'it needs a person’s approval and nobody could answer (cadre run off a terminal or with --approvals deny)';
  return `Permission denied: ${call} was not run: ${reason}. Do not retry it unchanged; do the task another way or say what you need. ${howToAllow(approval.tool, approval.argument ?? undefined)} Answering asks: cadre approve ID, --yes, or --approvals wait.`;
}

import type { ToolCall, ToolMiddleware } from '../loop/tool-pipeline.ts';
import { exactPattern, type PermissionCall, type PermissionRisk } from '../permissions/permission-rule.ts';
import { compilePermissions, decidePermission, type DecidedRule, type PermissionVerdict } from '../permissions/permissions.ts';
import { clampActivity, toolActivity, type RunActivity } from '../runs/activity.ts';
import type { ApprovalPreview, ApprovalRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { toolInfo, ToolInputError, type ToolInfo } from '../tools/define-tool.ts';
import type { SecretRedactor } from '../models/secret-redactor.ts';
import { groupRules, type ApprovalBroker } from './approval-broker.ts';
import { deniedAskReason } from './denied-ask-reason.ts';
import { ToolDeniedError } from './tool-denied-error.ts';

/**
 * The risk of a tool cadre knows nothing about (an AI SDK tool passed in `tools`, not made with
 * `defineTool`): `network`, as docs/tools-and-approvals.md rates MCP tools. It asks by default.
 */
export const unknownToolRisk: PermissionRisk = 'network';

/** Who makes the calls of the tools {@link gateToolCalls} gates. */
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

/** What {@link gateToolCalls} needs. */
export interface ToolGateServices {
  store: Store;
  broker: ApprovalBroker;
  /** The configuration's and the flags' rules. */
  rules: readonly DecidedRule[];
  /** Redacts secrets from what an ask shows of its call (a diff of a file may hold a key). */
  redactor: Pick<SecretRedactor, 'redactDeep'>;
}

/**
 * The tool pipeline's permission entry, for the tools named in `gated` (the agent's workspace
 * tools; the delegation tools have their own caps): a call the rules allow runs, one they deny
 * comes back to the model as a tool error saying what was denied and how a person can allow it,
 * and one that asks waits for exactly one answer (a person, `--yes`, no approver, the timeout or
 * a stop). Put it after `checkToolInput`, so a call the tool refuses anyway (bad input, a path
 * outside the workspace) is refused before anyone is asked. Synchronous for a call the rules decide.
 */
export function gateToolCalls(gated: Iterable<string>, context: ToolGateContext, services: ToolGateServices): ToolMiddleware {
  const names = new Set(gated);
  return {
    name: 'permission',
    appliesTo: ({ name }) => names.has(name),
    handle(call, next) {
      const info = toolInfo(call.tool);
      const argument = info === undefined ? undefined : call.checked ? info.argumentOfParsed(call.input) : info.argument(call.input);
      const request = { tool: call.name, risk: info?.risk ?? unknownToolRisk, argument };
      const verdict = decidePermission({ rules: services.rules, agentRules: context.agentRules }, request);
      if (verdict.decision === 'allow') return next();
      const summary = clampActivity(argument === undefined ? call.name : `${call.name} ${argument}`, 200);
      if (verdict.decision === 'deny') refuse(request, verdict, summary);
      return ask(call, info, request, summary).then(() => next());
    },
  };

  function refuse(request: PermissionCall, verdict: PermissionVerdict, _summary: string): never {
    context.setActivity?.({ kind: 'denied', ...toolAndArgument(request), by: 'rule' });
    throw new ToolDeniedError(deniedByRule(request.tool, request.argument, verdict));
  }

  /** A call the configured rules ask about: the session's "always" rules, then a person. */
  async function ask(call: ToolCall, info: ToolInfo | undefined, request: PermissionCall, summary: string): Promise<void> {
    // Rules a person set with "always" are read at each ask: another process may have added one.
    const sessionRules = compilePermissions(groupRules(await services.store.listSessionRules(context.sessionId)), 'session rules');
    const verdict = decidePermission({ rules: services.rules, agentRules: context.agentRules, sessionRules }, request);
    if (verdict.decision === 'allow') return;
    if (verdict.decision === 'deny') refuse(request, verdict, summary);
    context.setActivity?.({ kind: 'awaiting_approval', ...toolAndArgument(request) });
    // The ask's event is written straight away: the call's own events go first.
    context.writePending?.();
    const signal = call.options.abortSignal ?? new AbortController().signal;
    const { tool, risk, argument } = request;
    const preview = info === undefined ? null : await previewOf(info, call);
    const approval = await services.broker.request(
      { sessionId: context.sessionId, runId: context.runId, agent: context.agent, tool, argument, risk, summary, preview },
      signal,
    );
    if (approval.status !== 'approved') {
      if (approval.status === 'canceled') throw signal.reason ?? new Error('The run was stopped while it awaited approval.');
      context.setActivity?.({ kind: 'denied', ...toolAndArgument(request), by: approval.resolved_by ?? 'person' });
      throw new ToolDeniedError(deniedAsk(approval));
    }
    context.setActivity?.(toolActivity(call.name, call.input));
  }

  /**
   * What the ask shows of the call, secrets redacted. A call the tool refuses now (the file
   * changed since the input check) is refused before anyone is asked; a preview that fails for
   * another reason leaves the ask without one rather than failing the call.
   */
  async function previewOf(info: ToolInfo, call: ToolCall): Promise<ApprovalPreview | null> {
    try {
      const preview = await info.previewOfParsed(call.checked ? call.input : info.parse(call.input));
      return preview === undefined ? null : services.redactor.redactDeep(preview);
    } catch (error) {
      if (ToolInputError.isInstance(error)) throw error;
      return null;
    }
  }
}

/** The tool and its argument as an activity shows them (the argument cut as the ask's summary is). */
function toolAndArgument({ tool, argument }: PermissionCall): { tool: string; argument?: string } {
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
  return `Permission denied: ${call} was not run: ${deniedAskReason(approval)}. Do not retry it unchanged; do the task another way or say what you need. ${howToAllow(approval.tool, approval.argument ?? undefined)} Answering asks: cadre approve ID, --yes, or --approvals wait.`;
}

import { deniedAskReason } from '../approvals/denied-ask-reason.ts';
import { ToolDeniedError } from '../approvals/tool-denied-error.ts';
import { groupRules } from '../approvals/approval-broker.ts';
import { delegationTool } from '../permissions/permission-rule.ts';
import { compilePermissions, decideDelegation, type DecidedRule, type PermissionVerdict } from '../permissions/permissions.ts';
import type { HoldOutcome, RunHold } from '../runs/run-manager.ts';
import type { ApprovalRecord, RunRecord } from '../store/records.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { ApprovalBroker } from '../approvals/approval-broker.ts';
import type { PermissionsConfig } from '../permissions/permissions.ts';
import type { DelegationRules, DelegationScope, DelegationServices } from './delegation-services.ts';

/**
 * The {@link DelegationRules} of a runtime: the configuration's and the flags' rules compiled once,
 * each agent's front-matter rules on its first delegation (a `ConfigError` for an invalid rule).
 */
export function createDelegationRules(options: {
  permissions?: PermissionsConfig;
  agents: Pick<AgentRegistry, 'get'>;
  broker: ApprovalBroker;
  primarySessionOf: (sessionId: string) => Promise<string>;
}): DelegationRules {
  const rules = compilePermissions(options.permissions, 'permissions');
  const byAgent = new Map<string, DecidedRule[]>();
  return {
    rules,
    broker: options.broker,
    primarySessionOf: options.primarySessionOf,
    rulesOfAgent(name) {
      const definition = options.agents.get(name);
      if (!definition?.permissions) return [];
      let compiled = byAgent.get(name);
      if (!compiled) byAgent.set(name, (compiled = compilePermissions(definition.permissions, `agent '${name}'`)));
      return compiled;
    },
  };
}

/**
 * Applies the rules on delegation to one run about to be made (`agent`, each `agent_parallel`
 * task, a follow-up run): allowed, it returns undefined; denied, it throws a {@link ToolDeniedError}
 * quoting the rule as written (no run is made); asked, it returns the hold to start the run with
 * (`runs.start(input, { hold })`): the run waits `queued`, out of the slot queue, with the activity
 * `awaiting approval: agent NAME`, until a person approves it; denied or timed out, it ends
 * `failed` / `denied`. Without rules (services made without them) everything is allowed.
 * @example const hold = await gateDelegation(services, scope, 'reviewer'); await services.runs.start(input, { hold });
 */
export async function gateDelegation(services: DelegationServices, scope: DelegationScope, agent: string): Promise<RunHold | undefined> {
  const delegationRules = services.delegationRules;
  if (!delegationRules) return undefined;
  const caller = await callerOf(services, scope);
  const model = services.modelLabelFor(agent);
  const layers = { rules: delegationRules.rules, agentRules: delegationRules.rulesOfAgent(caller) };
  let verdict = decideDelegation(layers, { agent, model });
  if (verdict.decision === 'allow') return undefined;
  if (verdict.decision === 'deny') throw new ToolDeniedError(deniedByRule(agent, model, verdict));
  // Rules a person set with "always" are read at each ask: another process may have added one.
  const sessionId = await delegationRules.primarySessionOf(scope.sessionId);
  const sessionRules = compilePermissions(groupRules(await services.store.listSessionRules(sessionId)), 'session rules');
  verdict = decideDelegation({ ...layers, sessionRules }, { agent, model });
  if (verdict.decision === 'allow') return undefined;
  if (verdict.decision === 'deny') throw new ToolDeniedError(deniedByRule(agent, model, verdict));
  const byModel = verdict.rule !== null && /\(\s*model:/i.test(verdict.rule);
  const argument = byModel ? `model:${model}` : agent;
  const summary = byModel ? `agent ${agent} (model ${model})` : `agent ${agent}`;
  return {
    activity: { kind: 'awaiting_approval', tool: delegationTool, argument: agent },
    async wait(run, signal) {
      const approval = await delegationRules.broker.request(
        { sessionId, runId: run.id, agent: caller, tool: delegationTool, argument, risk: 'exec', summary },
        signal,
      );
      return outcomeOf(approval, agent);
    },
  };
}

/**
 * The hold of a run recovered while its delegation awaited an answer (a queued run whose activity
 * is `awaiting approval: agent NAME`): it waits again for the same stored ask (answered meanwhile,
 * it goes on at once), never starting before a person approves. Undefined for any other run.
 */
export function resumeDelegationHold(services: DelegationServices, run: RunRecord): RunHold | undefined {
  const { activity } = run;
  const delegationRules = services.delegationRules;
  if (!delegationRules || activity?.kind !== 'awaiting_approval' || activity.tool !== delegationTool) return undefined;
  return {
    activity,
    async wait(held, signal) {
      const [approval] = await services.store.listApprovals({ run_id: held.id, limit: 1 });
      if (approval?.tool === delegationTool) return outcomeOf(await delegationRules.broker.resume(approval.id, signal), held.agent);
      // The process died between storing the run and its ask: it asks now.
      const sessionId = await delegationRules.primarySessionOf(held.parent_session_id);
      const caller = await callerOf(services, { sessionId: held.parent_session_id, parentRunId: held.parent_run_id });
      const asked = await delegationRules.broker.request(
        { sessionId, runId: held.id, agent: caller, tool: delegationTool, argument: held.agent, risk: 'exec', summary: `agent ${held.agent}` },
        signal,
      );
      return outcomeOf(asked, held.agent);
    },
  };
}

/** The agent that delegates: the run's agent for a subagent, the session's for a primary agent. */
async function callerOf(services: DelegationServices, scope: Pick<DelegationScope, 'sessionId' | 'parentRunId'>): Promise<string> {
  if (scope.parentRunId !== null) {
    const run = await services.store.getRun(scope.parentRunId);
    if (run) return run.agent;
  }
  return (await services.store.getSession(scope.sessionId))?.agent ?? 'main';
}

function outcomeOf(approval: ApprovalRecord, agent: string): HoldOutcome {
  if (approval.status === 'approved') return { go: true };
  return { go: false, error: { kind: 'denied', message: deniedAsk(approval, agent) } };
}

function deniedByRule(agent: string, model: string, verdict: PermissionVerdict): string {
  return `Delegation denied: agent '${agent}' (model ${model}) is denied by the rule deny '${verdict.rule}'. No run was started. Do not retry it; do the task yourself or another way, or say what you need. A person can change the rule under "permissions" in cadre.config.json, or in the agent's front matter.`;
}

function deniedAsk(approval: ApprovalRecord, agent: string): string {
  const reason = approval.status === 'canceled' ? 'its ask was closed' : deniedAskReason(approval);
  return `Delegation denied: the run of agent '${agent}' was not started: ${reason} (approval ${approval.id}). Do not retry it unchanged; do the task yourself or another way, or say what you need. Answering asks: cadre approve ID, --yes, or --approvals wait.`;
}

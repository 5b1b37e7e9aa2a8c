import { z } from 'zod';
import { ConfigError } from '../errors/config-error.ts';
import {
  delegationTool,
  parsePermissionRule,
  permissionDecisions,
  ruleMatches,
  specificity,
  type PermissionCall,
  type PermissionDecision,
  type PermissionRisk,
  type PermissionRule,
} from './permission-rule.ts';

/**
 * Permission rules as written in `cadre.config.json` (`"permissions"`) and in an agent's front
 * matter: lists of rules per decision, the shape Claude Code's settings use.
 * @example { "allow": ["bash(npm test*)"], "ask": ["write_file(docs/*)"], "deny": ["network"] }
 */
export interface PermissionsConfig {
  allow?: string[];
  ask?: string[];
  deny?: string[];
}

/** A parsed rule with its decision. */
export interface DecidedRule {
  rule: PermissionRule;
  decision: PermissionDecision;
}

/** What calls of each risk get when no rule matches them. */
export const defaultPermissions: Readonly<Record<PermissionRisk, PermissionDecision>> = Object.freeze({
  read: 'allow',
  write: 'ask',
  exec: 'ask',
  network: 'ask',
});

const ruleList = z.array(z.string({ error: 'must be a rule as text' }), { error: 'must be a list of rules' });

/** The `permissions` object, as written; rules are parsed by {@link compilePermissions}. */
export const permissionsConfigSchema = z.strictObject(
  { allow: ruleList.optional(), ask: ruleList.optional(), deny: ruleList.optional() },
  { error: 'must be an object like { "allow": ["bash(npm test*)"], "deny": ["network"] }' },
);

/**
 * Parses every rule of a permissions object.
 * @param where names the source in errors (`cadre.config.json`, `agent 'coder'`, `--allow`)
 * @throws {ConfigError} naming the source and the rule.
 */
export function compilePermissions(config: PermissionsConfig | undefined, where: string): DecidedRule[] {
  if (config === undefined) return [];
  const checked = permissionsConfigSchema.safeParse(config);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const key = issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path.join('.');
    const message = issue.code === 'unrecognized_keys' ? 'unknown key (known keys: allow, ask, deny)' : issue.message;
    throw new ConfigError(`${where}: permissions${key ? `.${key}` : ''}: ${message}`);
  }
  const rules: DecidedRule[] = [];
  for (const decision of permissionDecisions) {
    for (const text of checked.data[decision] ?? []) {
      try {
        rules.push({ rule: parsePermissionRule(text), decision });
      } catch (error) {
        throw new ConfigError(`${where}: permissions.${decision}: ${(error as Error).message}`, { cause: error });
      }
    }
  }
  return rules;
}

/** Which rule decided a call, for messages: null when the default of its risk did. */
export interface PermissionVerdict {
  decision: PermissionDecision;
  rule: string | null;
}

const strictness: Record<PermissionDecision, number> = { allow: 0, ask: 1, deny: 2 };

/** The stricter of two decisions. */
export function stricter(a: PermissionDecision, b: PermissionDecision): PermissionDecision {
  return permissionDecisions[Math.max(strictness[a], strictness[b])];
}

/**
 * What `rules` say about a call: the most specific matching rule decides (tool with argument >
 * tool > risk), and at equal specificity the stricter one (deny > ask > allow). Null when none match.
 */
export function matchRules(rules: readonly DecidedRule[], call: PermissionCall): PermissionVerdict | null {
  let best: DecidedRule | null = null;
  for (const candidate of rules) {
    if (!ruleMatches(candidate.rule, call, candidate.decision)) continue;
    if (
      best === null ||
      specificity(candidate.rule) > specificity(best.rule) ||
      (specificity(candidate.rule) === specificity(best.rule) && strictness[candidate.decision] > strictness[best.decision])
    ) {
      best = candidate;
    }
  }
  return best === null ? null : { decision: best.decision, rule: best.rule.text };
}

/** The layers of rules that decide one call. */
export interface PermissionLayers {
  /** The configuration's and the flags' rules together. */
  rules: readonly DecidedRule[];
  /** The agent's own rules: they can make a call stricter, never looser. */
  agentRules?: readonly DecidedRule[];
  /** Answers a person gave with "always" in this session: they answer calls that would ask. */
  sessionRules?: readonly DecidedRule[];
}

/**
 * Decides one tool call: the rules (else the default of the call's risk), made stricter by the
 * agent's rules, and an `ask` answered by a rule a person set for the session.
 * @param fallback what a call no rule matches gets. @default the default of its risk
 * @example decidePermission({ rules: compilePermissions({ allow: ['bash(npm test*)'] }, 'config') }, { tool: 'bash', risk: 'exec', argument: 'npm test' })
 */
export function decidePermission(
  layers: PermissionLayers,
  call: PermissionCall,
  fallback: PermissionDecision = defaultPermissions[call.risk],
): PermissionVerdict {
  let verdict = matchRules(layers.rules, call) ?? { decision: fallback, rule: null };
  const agent = layers.agentRules ? matchRules(layers.agentRules, call) : null;
  if (agent && stricter(verdict.decision, agent.decision) !== verdict.decision) verdict = agent;
  if (verdict.decision === 'ask' && layers.sessionRules) {
    const session = matchRules(layers.sessionRules, call);
    if (session) verdict = session;
  }
  return verdict;
}

/** One delegation as rules see it (CONTRACT section 19). */
export interface DelegationCall {
  /** The agent delegated to. */
  agent: string;
  /** Its resolved model spec, `provider:model-id`. */
  model: string;
}

/** Whether a rule is about delegation: `agent`, `agent(NAME)`, `agent(model:PATTERN)` (or Claude Code's `Agent`/`Task`). */
function onDelegation({ rule }: DecidedRule): boolean {
  return rule.kind === 'agent' || (rule.kind === 'tool' && rule.tool === delegationTool);
}

/**
 * Decides one delegation: only rules on delegation apply (a risk rule like `exec` does not); the
 * most specific matching one decides (`agent(reviewer)` > `agent(review-*)` or
 * `agent(model:openai:*)` > `agent`), deny beating allow at equal specificity; the agent's own
 * rules can only make it stricter; an `ask` is answered by a rule a person set for the session.
 * With no rule, delegation is allowed.
 * @example decideDelegation({ rules: compilePermissions({ deny: ['agent(model:openai:*)'] }, 'config') }, { agent: 'reviewer', model: 'openai:gpt-5' })
 */
export function decideDelegation(layers: PermissionLayers, delegation: DelegationCall): PermissionVerdict {
  const call = delegationCall(delegation);
  const only = (rules: readonly DecidedRule[] | undefined) => rules?.filter(onDelegation);
  return decidePermission({ rules: only(layers.rules) ?? [], agentRules: only(layers.agentRules), sessionRules: only(layers.sessionRules) }, call, 'allow');
}

/** The call rules match for a delegation. */
export function delegationCall({ agent, model }: DelegationCall): PermissionCall {
  return { tool: delegationTool, risk: 'exec', argument: agent, model };
}

/**
 * The call an ask stands for, as rules match it: an ask about a delegation's model has the
 * argument `model:SPEC` (so that "always" makes the rule `agent(model:SPEC)`).
 */
export function callOfAsk(ask: { tool: string; risk: string; argument: string | null }): PermissionCall {
  if (ask.tool === delegationTool && ask.argument?.startsWith('model:')) return { tool: ask.tool, risk: 'exec', model: ask.argument.slice('model:'.length) };
  return { tool: ask.tool, risk: ask.risk as PermissionRisk, argument: ask.argument ?? undefined };
}

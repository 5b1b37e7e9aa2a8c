import { posix } from 'node:path';
import { ConfigError } from '../errors/config-error.ts';

/** What a tool can do to the world; the same names as the tools' `risk` (docs/tools-and-approvals.md). */
export type PermissionRisk = 'read' | 'write' | 'exec' | 'network';

/** The risks, least dangerous first. */
export const permissionRisks: readonly PermissionRisk[] = ['read', 'write', 'exec', 'network'];

/** What a rule says about the calls it matches. */
export type PermissionDecision = 'allow' | 'ask' | 'deny';

/** The decisions, least strict first: at equal specificity the stricter one wins. */
export const permissionDecisions: readonly PermissionDecision[] = ['allow', 'ask', 'deny'];

/**
 * One parsed rule: a risk (`write`), a tool (`bash`) or a tool with an argument pattern
 * (`bash(npm test*)`, `write_file(docs/*)`), where `*` stands for any text.
 */
export type PermissionRule =
  | { text: string; kind: 'risk'; risk: PermissionRisk }
  | { text: string; kind: 'tool'; tool: string }
  | { text: string; kind: 'argument'; tool: string; pattern: string; matcher: RegExp; pathMatcher: RegExp }
  | AgentRule;

/**
 * A rule on delegation (CONTRACT section 19): `agent(NAME)` matches a delegation to the agent NAME,
 * `agent(model:PATTERN)` one whose resolved model spec (`provider:model-id`) matches; both are globs
 * (`*` any text). Claude Code's `Agent(...)` and `Task(...)` read the same.
 */
export interface AgentRule {
  text: string;
  kind: 'agent';
  /** What the pattern is matched against: the agent's name, or its resolved model spec. */
  target: 'name' | 'model';
  pattern: string;
  matcher: RegExp;
  /** Whether the pattern has no `*`: it names one agent or one model, which makes it more specific than a glob. */
  exact: boolean;
}

/** The tool name rules on delegation use (`agent`, `agent(review-*)`). */
export const delegationTool = 'agent';

/** Claude Code's names of its delegation tool, which rules in a configuration may use for `agent`. */
const delegationAliases = new Set(['agent', 'Agent', 'Task']);

/** One tool call as rules see it. */
export interface PermissionCall {
  tool: string;
  risk: PermissionRisk;
  /** The call's main argument (`bash`'s command, `write_file`'s path), when the tool has one. */
  argument?: string;
  /** For a delegation (tool `agent`, the agent's name as `argument`): the resolved model spec `provider:model-id`. */
  model?: string;
}

/**
 * How specific a rule is: the most specific matching rule decides. A rule on delegation that names
 * one agent or one model (`agent(reviewer)`) is more specific than a glob (`agent(review-*)`).
 */
export function specificity(rule: PermissionRule): number {
  if (rule.kind === 'agent') return rule.exact ? 4 : 3;
  return rule.kind === 'argument' ? 3 : rule.kind === 'tool' ? 2 : 1;
}

const toolNamePattern = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const ruleExamples = 'a risk (read, write, exec, network), a tool name (bash) or a tool with an argument pattern (bash(npm test*), write_file(docs/*))';

/**
 * Parses one rule.
 * @throws {ConfigError} naming the rule and saying what a rule looks like.
 * @example parsePermissionRule('bash(npm test*)')
 */
export function parsePermissionRule(text: unknown): PermissionRule {
  if (typeof text !== 'string') throw new ConfigError(`Permission rule ${JSON.stringify(text) ?? String(text)} must be text: ${ruleExamples}.`);
  const rule = text.trim();
  if ((permissionRisks as readonly string[]).includes(rule)) return { text: rule, kind: 'risk', risk: rule as PermissionRisk };
  if (delegationAliases.has(rule)) return { text: rule, kind: 'tool', tool: delegationTool };
  if (toolNamePattern.test(rule)) return { text: rule, kind: 'tool', tool: rule };
  const open = rule.indexOf('(');
  // Without a parenthesis (or with one first) the tool name is empty, which is no tool name.
  const tool = rule.slice(0, Math.max(0, open));
  if (rule.endsWith(')') && toolNamePattern.test(tool)) {
    const pattern = rule.slice(open + 1, -1);
    if (delegationAliases.has(tool)) return parseAgentRule(rule, tool, pattern);
    if (pattern.trim() === '')
      throw new ConfigError(`Permission rule '${rule}' has an empty argument pattern: write '${tool}' for every call, or a pattern like ${tool}(npm test*).`);
    if ((permissionRisks as readonly string[]).includes(tool)) {
      throw new ConfigError(`Permission rule '${rule}': '${tool}' is a risk, and a risk takes no argument pattern; name a tool, like bash(npm test*).`);
    }
    return { text: rule, kind: 'argument', tool, pattern, matcher: patternMatcher(pattern.trim()), pathMatcher: patternMatcher(normalizePath(pattern)) };
  }
  throw new ConfigError(`Invalid permission rule '${text}': a rule is ${ruleExamples}.`);
}

const agentRuleExamples = 'agent(NAME) with NAME an agent or a glob (agent(review-*)), or agent(model:PATTERN) (agent(model:openai:*))';

function parseAgentRule(rule: string, tool: string, written: string): AgentRule {
  const pattern = written.trim();
  const model = /^model:/i.test(pattern);
  const glob = model ? pattern.slice('model:'.length).trim() : pattern;
  if (glob === '') {
    throw new ConfigError(
      model
        ? `Permission rule '${rule}' names no model: write a model spec or a glob, like ${tool}(model:openai:*).`
        : `Permission rule '${rule}' names no agent: write '${tool}' for every delegation, or ${agentRuleExamples}.`,
    );
  }
  return { text: rule, kind: 'agent', target: model ? 'model' : 'name', pattern: glob, matcher: patternMatcher(glob), exact: !/(^|[^\\])\*/.test(glob) };
}

/** `*` stands for any text (slashes and spaces included), `\\*` for a star itself; the rest is literal. */
function patternMatcher(pattern: string): RegExp {
  let source = '';
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index];
    if (character === '\\' && (pattern[index + 1] === '*' || pattern[index + 1] === '\\')) {
      source += `\\${pattern[++index]}`;
    } else if (character === '*') {
      source += '[\\s\\S]*';
    } else {
      source += character.replace(/[\\^$.|?+()[\]{}]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

/** A pattern that matches exactly `argument` (its stars and backslashes escaped). */
export function exactPattern(argument: string): string {
  return argument.replace(/[\\*]/g, '\\$&');
}

/**
 * The arguments of `read` and `write` tools are paths, compared in a normal form: trimmed, and
 * without `./` or `..` detours, so `docs/../src/a.ts` cannot pass for a file under `docs/`.
 * Other arguments (commands, URLs) are compared as written, trimmed.
 */
export function normalizeArgument(argument: string, risk: PermissionRisk): string {
  return risk === 'read' || risk === 'write' ? normalizePath(argument) : argument.trim();
}

function normalizePath(path: string): string {
  const trimmed = path.trim();
  // A line break makes it no path of a real file: only a leading ./ goes.
  if (/[\n\r]/.test(trimmed)) return trimmed.replace(/^\.\/+/, '');
  return posix.normalize(trimmed);
}

/**
 * Shell operators that chain or redirect commands: an allow pattern like `bash(npm test*)` must not
 * also allow `npm test; rm -rf ~`.
 */
const shellOperators = /[;&|`<>\n\r]|\$\(/;

/** A `..` path segment: `cat docs/*` must not allow `cat docs/../../etc/passwd`. */
const parentSegment = /(^|[\s/=])\.\.(\/|\s|$)/;

/** Whether a command chains, redirects or climbs out of a folder (see {@link ruleMatches}). */
function escapes(text: string): boolean {
  return shellOperators.test(text) || parentSegment.test(text);
}

/**
 * Whether `rule` matches `call`. An argument pattern of an `allow` rule does not match an `exec`
 * command that chains or redirects with shell operators, or has a `..` path segment, unless its
 * pattern has them itself (deny and ask rules still match it, which only makes the call stricter;
 * without a `decision` the rule matches as a deny rule would).
 */
export function ruleMatches(rule: PermissionRule, call: PermissionCall, decision?: PermissionDecision): boolean {
  switch (rule.kind) {
    case 'risk':
      return rule.risk === call.risk;
    case 'tool':
      return rule.tool === call.tool;
    case 'agent':
      return call.tool === delegationTool && agentRuleMatches(rule, call);
    case 'argument': {
      if (rule.tool !== call.tool || call.argument === undefined) return false;
      const argument = normalizeArgument(call.argument, call.risk);
      if (decision === 'allow' && call.risk === 'exec' && escapes(argument) && !escapes(rule.pattern)) return false;
      return (call.risk === 'read' || call.risk === 'write' ? rule.pathMatcher : rule.matcher).test(argument);
    }
  }
}

/**
 * Whether a rule on delegation matches: a name pattern the agent's name, a model pattern the
 * resolved spec `provider:model-id`, or, when the pattern names no provider (no `:`), the model id.
 */
function agentRuleMatches(rule: AgentRule, call: PermissionCall): boolean {
  if (rule.target === 'name') return call.argument !== undefined && rule.matcher.test(call.argument.trim());
  if (call.model === undefined) return false;
  if (rule.matcher.test(call.model)) return true;
  const colon = call.model.indexOf(':');
  return !rule.pattern.includes(':') && colon >= 0 && rule.matcher.test(call.model.slice(colon + 1));
}

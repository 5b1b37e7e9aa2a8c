import type { ToolSet } from 'ai';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import { stopToolCalls } from '../loop/stop-tool-calls.ts';
import type { ToolMiddleware } from '../loop/tool-pipeline.ts';
import type { SecretRedactor } from '../models/secret-redactor.ts';
import { compilePermissions, type DecidedRule, type PermissionsConfig } from '../permissions/permissions.ts';
import type { Store } from '../store/store.ts';
import { checkToolInput } from '../tools/check-tool-input.ts';
import { redactToolOutput } from '../tools/redact-tool-output.ts';
import type { ApprovalBroker } from './approval-broker.ts';
import { gateToolCalls, type ToolGateContext } from './gate-tools.ts';

/** Who calls the tools of a pipeline: the agent comes separately, its rules from its definition. */
export type ToolCaller = Omit<ToolGateContext, 'agent' | 'agentRules'>;

/** Options of {@link createToolPolicy}. */
export interface ToolPolicyOptions {
  store: Store;
  broker: ApprovalBroker;
  redactor: SecretRedactor;
  /** The configuration's and the flags' permission rules. */
  permissions?: PermissionsConfig;
  /** Span entries of a caller's tool calls (telemetry). @default none */
  traceEntries?: (caller: { sessionId: string; runId: string | null; agent: string }) => ToolMiddleware[];
}

/** The tool policy of a runtime: which calls run, ask or are denied, and what wraps every call. */
export interface ToolPolicy {
  /**
   * The tool pipeline of an agent's calls, in order: results redacted, input checked, the agent's
   * workspace tools behind the permission rules, and a stopped run's calls ended. (The loop adds
   * its activity watch outermost.)
   */
  pipelineFor(agent: AgentDefinition, workspace: ToolSet, caller: ToolCaller): ToolMiddleware[];
}

/**
 * Creates the {@link ToolPolicy}: the configuration's rules compiled once, each agent's own rules
 * compiled on its first call (throws a `ConfigError` for an invalid rule).
 */
export function createToolPolicy(options: ToolPolicyOptions): ToolPolicy {
  const { store, broker } = options;
  const rules = compilePermissions(options.permissions, 'permissions');
  const agentRules = new WeakMap<AgentDefinition, DecidedRule[]>();
  const rulesOfAgent = (agent: AgentDefinition) => {
    let compiled = agentRules.get(agent);
    if (!compiled) agentRules.set(agent, (compiled = compilePermissions(agent.permissions, `agent '${agent.name}'`)));
    return compiled;
  };
  const redactEntry = redactToolOutput(options.redactor);

  return {
    pipelineFor(agent, workspace, caller) {
      const gate = gateToolCalls(
        Object.keys(workspace),
        { ...caller, agent: agent.name, agentRules: rulesOfAgent(agent) },
        { store, broker, rules, redactor: options.redactor },
      );
      // Tracing inside the redaction (which copies errors): it sees each call's own outcome, a denial by the gate included.
      const traced = options.traceEntries?.({ sessionId: caller.sessionId, runId: caller.runId, agent: agent.name }) ?? [];
      return [redactEntry, ...traced, checkToolInput, gate, stopToolCalls];
    },
  };
}

import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { Limits } from '../config/limits.ts';
import type { RunLedger } from '../runs/run-ledger.ts';
import type { RunManager } from '../runs/run-manager.ts';
import type { TokenBudget } from '../runs/token-budget.ts';
import type { Store } from '../store/store.ts';
import type { NewId, Now } from '../util/clock.ts';
import type { ApprovalBroker } from '../approvals/approval-broker.ts';
import type { DecidedRule } from '../permissions/permissions.ts';

/** What the delegation tools need from the runtime. */
export interface DelegationServices {
  store: Store;
  runs: RunManager;
  /** Token budgets: a session past its budget starts no run. */
  budget: TokenBudget;
  ledger: RunLedger;
  agents: AgentRegistry;
  limits: Limits;
  now: Now;
  newId: NewId;
  /** A label of the model a child session of this agent uses (for the session record). */
  modelLabelFor: (agent: string) => string;
  /** The permission rules on delegation (`agent(NAME)`, `agent(model:PATTERN)`). @default none: every delegation is allowed */
  delegationRules?: DelegationRules;
}

/** Who is delegating: the session whose model calls the tools. */
export interface DelegationScope {
  /** The parent session: the runs started here belong to it. */
  sessionId: string;
  /** Depth of the caller: 0 for a primary agent, the run's depth for a subagent. */
  depth: number;
  /** The run whose subagent is calling, or null for a primary agent. */
  parentRunId: string | null;
  /**
   * The calling agent's name, given where cadre's own loop holds the caller's conversation: `agent`
   * then offers `fork` (a fork with no agent named runs this one). cadre.tools() and `cadre mcp`
   * leave it out, as cadre does not hold their parent's conversation. @default no `fork`
   */
  agent?: string;
}

/** What the rules on delegation need (CONTRACT section 19). */
export interface DelegationRules {
  /** The configuration's and the flags' permission rules (an untrusted workspace's allow rules left out). */
  rules: readonly DecidedRule[];
  /** The front-matter rules of the agent that delegates: they can only narrow. */
  rulesOfAgent: (agent: string) => readonly DecidedRule[];
  /** Stores asks and waits for their answers. */
  broker: ApprovalBroker;
  /** The primary session of a session: asks and "always" rules belong to it. */
  primarySessionOf: (sessionId: string) => Promise<string>;
}

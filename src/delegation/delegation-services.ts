import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { Limits } from '../config/limits.ts';
import type { RunLedger } from '../runs/run-ledger.ts';
import type { RunManager } from '../runs/run-manager.ts';
import type { RunMessageInput, RunMessageReceipt } from '../runs/run-inbox.ts';
import type { TokenBudget } from '../runs/token-budget.ts';
import type { Store } from '../store/store.ts';
import type { NewId, Now } from '../util/clock.ts';

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
  /** Stores a message for a run and tells the process that runs it (`sendRunMessage` with the runtime's bus and coordination). */
  sendRunMessage: (input: RunMessageInput) => Promise<RunMessageReceipt>;
}

/** Who is delegating: the session whose model calls the tools. */
export interface DelegationScope {
  /** The parent session: the runs started here belong to it. */
  sessionId: string;
  /** Depth of the caller: 0 for a primary agent, the run's depth for a subagent. */
  depth: number;
  /** The run whose subagent is calling, or null for a primary agent. */
  parentRunId: string | null;
}

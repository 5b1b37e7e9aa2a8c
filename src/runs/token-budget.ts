import type { RunRecord, Usage } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { setBounded } from '../util/bounded-map.ts';

/** The budgets a {@link TokenBudget} enforces (docs/runs-and-limits.md); absent means none. */
export interface TokenBudgetLimits {
  maxTokensPerRun?: number;
  maxTokensPerSession?: number;
}

/** What a parent session has spent: its primary agent, its runs (nested ones included), and the budget. */
export interface SessionTokens {
  /** The primary session the budget belongs to. */
  session_id: string;
  /** Tokens of the primary agent's own model calls. */
  agent: Usage;
  /** Tokens of every run of the session, nested runs included. */
  runs: Usage;
  /** Input + output tokens of both. */
  total: number;
  /** `limits.maxTokensPerSession`, or null when there is none. */
  budget: number | null;
}

/**
 * Token budgets, counted from the store (the source of truth shared by every process): a run's
 * own input + output tokens against `maxTokensPerRun`, and a parent session's primary agent and
 * all its runs together against `maxTokensPerSession`.
 */
export interface TokenBudget {
  readonly limits: Readonly<TokenBudgetLimits>;
  /**
   * Why a run may make no further model call, or null while it may. `usage` is the run's usage
   * as its loop knows it now (the stored record may lag by a step).
   */
  exceeded(run: RunRecord, usage: Usage): Promise<string | null>;
  /** What the parent session that `sessionId` belongs to (itself, or the root above a child session) has spent. */
  sessionTokens(sessionId: string): Promise<SessionTokens>;
  /** A tool error for the model when the session's budget is spent, else null. */
  sessionSpent(sessionId: string): Promise<string | null>;
  /**
   * The usage of a run this process executes, as its loop knows it now: counted instead of the
   * stored record, which lags by a step's write, so parallel runs of one process see each other's
   * latest steps.
   */
  track(runId: string, usage: Usage): void;
  /** Forgets a tracked run once its usage is stored for good. */
  release(runId: string): void;
}

/** `1234 in + 56 out`: input plus output tokens of a usage. */
export function totalTokens(usage: Usage): number {
  return usage.input_tokens + usage.output_tokens;
}

/** Creates the {@link TokenBudget}; with neither limit set it never reads the store to check. */
export function createTokenBudget({ store, limits }: { store: Store; limits: TokenBudgetLimits }): TokenBudget {
  /** Child session -> its primary session. Immutable, so kept (bounded). */
  const roots = new Map<string, string>();
  const live = new Map<string, Usage>();

  async function rootOf(sessionId: string): Promise<string> {
    const known = roots.get(sessionId);
    if (known !== undefined) return known;
    let current = sessionId;
    // Depth is small (limits.maxDepth); the guard only stops a corrupt cycle.
    for (let hops = 0; hops < 64; hops++) {
      const session = await store.getSession(current);
      if (!session?.parent_run_id) break;
      const parentRun = await store.getRun(session.parent_run_id);
      if (!parentRun) break;
      current = parentRun.parent_session_id;
    }
    setBounded(roots, sessionId, current, 10_000);
    return current;
  }

  async function tokensOf(sessionId: string, current?: { runId: string; usage: Usage }): Promise<SessionTokens> {
    const root = await rootOf(sessionId);
    const agent = (await store.getSessionUsage(root)) ?? { input_tokens: 0, output_tokens: 0 };
    const runs: Usage = { input_tokens: 0, output_tokens: 0 };
    let level = [root];
    while (level.length > 0) {
      const found = (await Promise.all(level.map((id) => store.listRuns({ parent_session_id: id })))).flat();
      for (const run of found) {
        const usage = run.id === current?.runId ? current.usage : (live.get(run.id) ?? run.usage);
        runs.input_tokens += usage.input_tokens;
        runs.output_tokens += usage.output_tokens;
      }
      level = found.map((run) => run.child_session_id);
    }
    return { session_id: root, agent, runs, total: totalTokens(agent) + totalTokens(runs), budget: limits.maxTokensPerSession ?? null };
  }

  return {
    limits,

    async exceeded(run, usage) {
      const perRun = limits.maxTokensPerRun;
      if (perRun !== undefined && totalTokens(usage) >= perRun) {
        return `The run used ${totalTokens(usage)} tokens of its budget of ${perRun} (limits.maxTokensPerRun).`;
      }
      const perSession = limits.maxTokensPerSession;
      if (perSession === undefined) return null;
      const session = await tokensOf(run.parent_session_id, { runId: run.id, usage });
      if (session.total < perSession) return null;
      return `The session used ${session.total} tokens of its budget of ${perSession} (limits.maxTokensPerSession).`;
    },

    track(runId, usage) {
      if (limits.maxTokensPerSession !== undefined) live.set(runId, { ...usage });
    },

    release(runId) {
      live.delete(runId);
    },

    sessionTokens(sessionId) {
      return tokensOf(sessionId);
    },

    async sessionSpent(sessionId) {
      const perSession = limits.maxTokensPerSession;
      if (perSession === undefined) return null;
      const session = await tokensOf(sessionId);
      if (session.total < perSession) return null;
      return (
        `This session's token budget is spent: ${session.total} of ${perSession} tokens used (limits.maxTokensPerSession), so no run was started. ` +
        'Answer with what you have; a person can raise limits.maxTokensPerSession.'
      );
    },
  };
}

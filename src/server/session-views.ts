import type { RunRecord, RunStatus, SessionRecord, Usage } from '../store/records.ts';
import { viewRun, type RunView } from '../runs/run-owner.ts';
import type { Store } from '../store/store.ts';

/** A session as the sessions list shows it. */
export interface SessionSummary extends SessionRecord {
  /** Tokens of all its runs, nested runs included. */
  usage: Usage;
  /** How many of its runs (nested included) are in each state; states without runs are left out. */
  run_counts: Partial<Record<RunStatus, number>>;
  /** Tokens of the primary agent's own model calls (not counted in `usage`). */
  agent_usage: Usage;
}

/** Runs as the API shows them: with `owner_gone` for a run whose process died. */
export function viewRuns(runs: readonly RunRecord[], now: string = new Date().toISOString()): RunView[] {
  return runs.map((run) => viewRun(run, now));
}

/**
 * Every run a session started, and the runs those runs' subagents started, oldest first.
 * Each run names its parent run in `parent_run_id`, so a view can nest them.
 */
export async function listSessionRuns(store: Store, sessionId: string): Promise<RunRecord[]> {
  const collected: RunRecord[] = [];
  let sessionIds = [sessionId];
  // Depth is small (limits.maxDepth), so one query per session and level is cheap enough.
  while (sessionIds.length > 0) {
    const level = (await Promise.all(sessionIds.map((id) => store.listRuns({ parent_session_id: id, order: 'oldest' })))).flat();
    collected.push(...level);
    sessionIds = level.map((run) => run.child_session_id);
  }
  return collected.sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
}

/** Sums the token usage of runs. */
export function sumUsage(runs: readonly RunRecord[]): Usage {
  const usage: Usage = { input_tokens: 0, output_tokens: 0 };
  for (const run of runs) {
    usage.input_tokens += run.usage.input_tokens;
    usage.output_tokens += run.usage.output_tokens;
  }
  return usage;
}

/** Counts runs by status. */
export function countByStatus(runs: readonly RunRecord[]): Partial<Record<RunStatus, number>> {
  const counts: Partial<Record<RunStatus, number>> = {};
  for (const run of runs) counts[run.status] = (counts[run.status] ?? 0) + 1;
  return counts;
}

/** A session with the usage and run counts of everything it started. */
export async function summarizeSession(store: Store, session: SessionRecord): Promise<SessionSummary> {
  const [runs, agentUsage] = await Promise.all([listSessionRuns(store, session.id), store.getSessionUsage(session.id)]);
  return { ...session, usage: sumUsage(runs), run_counts: countByStatus(runs), agent_usage: agentUsage ?? { input_tokens: 0, output_tokens: 0 } };
}

import type { RunView } from '../runs/run-owner.ts';
import type { RunStatus, SessionRecord } from '../store/records.ts';

/**
 * Where a session stands as a person reads it, more than its stored `status`: a session whose
 * primary agent is idle while its runs still work is `waiting_on_runs`, not idle. Computed once,
 * on the server; the sessions list, the open session's header and the API all show this value.
 */
export type SessionState =
  | { kind: 'awaiting_approval'; approvals: number }
  | { kind: 'running' }
  | { kind: 'waiting_on_runs'; runs: number }
  | { kind: 'idle' }
  | { kind: 'failed' }
  | { kind: 'canceled' };

const activeStatuses: ReadonlySet<RunStatus> = new Set(['queued', 'running']);

/**
 * A session's state: an ask waiting for a person comes first (someone must act), then the
 * primary agent's own turn, then runs still queued or working (a run whose process died and
 * whose lease ran out does not count: it waits for recovery, not for time). A session a person
 * stopped (`cadre stop`, Ctrl-C; `user_canceled_at`) reads `canceled` until its next turn, also
 * when no turn was running at the stop and its stored status stayed `idle`.
 *
 * @param runs every run the session started, nested runs included, as `viewRun` shows them
 * @param pendingApprovals how many of the session's asks wait for an answer
 */
export function sessionState(session: Pick<SessionRecord, 'status' | 'user_canceled_at'>, runs: readonly RunView[], pendingApprovals: number): SessionState {
  if (pendingApprovals > 0) return { kind: 'awaiting_approval', approvals: pendingApprovals };
  if (session.status === 'running') return { kind: 'running' };
  const working = runs.filter((run) => activeStatuses.has(run.status) && !run.owner_gone).length;
  if (working > 0) return { kind: 'waiting_on_runs', runs: working };
  if (session.status === 'failed' || session.status === 'canceled') return { kind: session.status };
  if (session.user_canceled_at !== null) return { kind: 'canceled' };
  return { kind: 'idle' };
}

/** A {@link SessionState} as one word of a table (`cadre sessions`): its kind, and what it waits on. */
export function sessionStateLabel(state: SessionState): string {
  if (state.kind === 'awaiting_approval') return `awaiting_approval(${state.approvals})`;
  if (state.kind === 'waiting_on_runs') return `waiting_on_runs(${state.runs})`;
  return state.kind;
}

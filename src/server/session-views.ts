import type { MessageRecord, RunRecord, RunStatus, SessionRecord, Usage } from '../store/records.ts';
import { addUsage } from '../store/add-usage.ts';
import { viewRun, type RunView } from '../runs/run-owner.ts';
import { listFamilyRuns } from '../runs/family-runs.ts';
import type { StoreView } from '../store/store-view.ts';
import { sessionState, type SessionState } from '../sessions/session-state.ts';

export { sessionState, type SessionState };

/** A session as the sessions list shows it. */
export interface SessionSummary extends SessionRecord {
  /** Tokens of all its runs, nested runs included. */
  usage: Usage;
  /** How many of its runs (nested included) are in each state; states without runs are left out. */
  run_counts: Partial<Record<RunStatus, number>>;
  /** Tokens of the primary agent's own model calls (not counted in `usage`). */
  agent_usage: Usage;
  /** The session's first prompt on one line (at most {@link maxTitleChars} characters); null before it has one. */
  title: string | null;
  /** Where the session stands, its runs and asks included: data, rendered by the page. */
  state: SessionState;
}

/** Longest session title the list shows. */
export const maxTitleChars = 120;

/** Runs as the API shows them: with `owner_gone` for a run whose process died. */
export function viewRuns(runs: readonly RunRecord[], now: string = new Date().toISOString()): RunView[] {
  return runs.map((run) => viewRun(run, now));
}

/**
 * Every run a session started, and the runs those runs' subagents started, oldest first.
 * Each run names its parent run in `parent_run_id`, so a view can nest them.
 */
export async function listSessionRuns(store: StoreView, sessionId: string): Promise<RunRecord[]> {
  return listFamilyRuns(store, sessionId);
}

/** Sums the token usage of runs. */
export function sumUsage(runs: readonly RunRecord[]): Usage {
  const usage: Usage = { input_tokens: 0, output_tokens: 0 };
  for (const run of runs) addUsage(usage, run.usage);
  return usage;
}

/** Counts runs by status. */
export function countByStatus(runs: readonly RunRecord[]): Partial<Record<RunStatus, number>> {
  const counts: Partial<Record<RunStatus, number>> = {};
  for (const run of runs) counts[run.status] = (counts[run.status] ?? 0) + 1;
  return counts;
}

/** The text of a session's first user message on one line, cut to {@link maxTitleChars}; null when there is none. */
export function sessionTitle(messages: readonly MessageRecord[]): string | null {
  const first = messages.find((message) => message.role === 'user');
  if (!first) return null;
  const parts = typeof first.content === 'string' ? [{ type: 'text', text: first.content }] : first.content;
  const text = Array.isArray(parts)
    ? parts.map((part: { type?: unknown; text?: unknown }) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join(' ')
    : '';
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '') return null;
  const characters = [...line];
  return characters.length <= maxTitleChars ? line : `${characters.slice(0, maxTitleChars - 1).join('')}…`;
}

/** What {@link summaryOf} builds a session's summary from, read once by the caller. */
export interface SessionParts {
  /** Every run the session started, nested runs included ({@link listSessionRuns}). */
  runs: readonly RunRecord[];
  agentUsage: Usage | null;
  messages: readonly MessageRecord[];
  pendingApprovals: number;
}

/** A session with its title, its state, and the usage and run counts of everything it started. */
export function summaryOf(
  session: SessionRecord,
  { runs, agentUsage, messages, pendingApprovals }: SessionParts,
  now: string = new Date().toISOString(),
): SessionSummary {
  return {
    ...session,
    usage: sumUsage(runs),
    run_counts: countByStatus(runs),
    agent_usage: agentUsage ?? { input_tokens: 0, output_tokens: 0 },
    title: sessionTitle(messages),
    state: sessionState(session, viewRuns(runs, now), pendingApprovals),
  };
}

/** Reads what {@link summaryOf} needs of a session. */
export async function readSessionParts(store: StoreView, sessionId: string): Promise<SessionParts> {
  const [runs, agentUsage, messages, approvals] = await Promise.all([
    listSessionRuns(store, sessionId),
    store.getSessionUsage(sessionId),
    store.listMessages(sessionId),
    store.listApprovals({ statuses: ['pending'], session_id: sessionId }),
  ]);
  return { runs, agentUsage, messages, pendingApprovals: approvals.length };
}

/** {@link summaryOf} a session, read from the store. */
export async function summarizeSession(store: StoreView, session: SessionRecord, now: string = new Date().toISOString()): Promise<SessionSummary> {
  return summaryOf(session, await readSessionParts(store, session.id), now);
}

/** The state of a session as it stands in the store now; null when there is no such session. */
export async function readSessionState(store: StoreView, sessionId: string, now: string = new Date().toISOString()): Promise<SessionState | null> {
  const [session, runs, approvals] = await Promise.all([
    store.getSession(sessionId),
    listSessionRuns(store, sessionId),
    store.listApprovals({ statuses: ['pending'], session_id: sessionId }),
  ]);
  return session === null ? null : sessionState(session, viewRuns(runs, now), approvals.length);
}

import type { MessageRole, RunEventType, RunRecord, SessionStatus, Usage } from '../store/records.ts';
import type { RunActivity } from '../store/run-activity.ts';

/** The session part of an export. */
export interface ExportedSession {
  id: string;
  agent: string;
  model: string;
  created_at: string;
  status: SessionStatus;
}

/** One message of the exported conversation. */
export interface ExportedMessage {
  seq: number;
  role: MessageRole;
  /** The AI SDK `ModelMessage` content: a string or an array of parts. */
  content: unknown;
  created_at: string;
}

/** One event of an exported run. */
export interface ExportedRunEvent {
  seq: number;
  at: string;
  type: RunEventType;
  data: Record<string, unknown>;
}

/** The run record fields of the contract; the store's lease and stop bookkeeping stays out. */
export type ExportedRunFields = Omit<
  RunRecord,
  'lease_owner' | 'lease_expires_at' | 'stop_requested_at' | 'stop_requested_by' | 'stop_reason' | 'activity' | 'forked_from'
> & {
  /** The typed activity beside its text, `last_activity`; absent from an export written before it was typed. */
  activity?: RunActivity | null;
  /** The parent run or session whose conversation a forked run copied; absent for a run that was not forked. */
  forked_from?: string;
};

/** A run with its events and the runs started from within its child session. */
export interface ExportedRun extends ExportedRunFields {
  events: ExportedRunEvent[];
  runs: ExportedRun[];
}

/**
 * The document `cadre export --format json` writes (docs/command-line.md), plus `usage`:
 * the tokens of every run, nested ones included; `agent_usage`: the session's own agent's tokens
 * (the primary agent's; for a child session, its subagent's);
 * and `token_budgets`: the limits in force when it was exported, when any was set.
 */
export interface SessionExport {
  format: 'cadre.session-export';
  version: 1;
  exported_at: string;
  session: ExportedSession;
  messages: ExportedMessage[];
  runs: ExportedRun[];
  usage: Usage;
  /** The tokens of the session's own agent (its model calls, not its runs'). */
  agent_usage: Usage;
  /** `limits.maxTokensPerRun` and `limits.maxTokensPerSession` as configured by the exporter; absent when neither is set. */
  token_budgets?: { max_tokens_per_run: number | null; max_tokens_per_session: number | null };
}

import type { RunRecord, RunStatus } from '../store/records.ts';

/** Longest summary of one run in a notification. */
export const maxNotificationSummaryChars = 300;

/**
 * One finished run as a notification tells its parent about it (docs/runs-and-limits.md): the fields
 * of its block in the `<subagent-notification>` text, as data. The API gives these with the
 * message, so a view renders them rather than reading the model-facing text.
 */
export interface NotificationRun {
  run_id: string;
  agent: string;
  status: RunStatus;
  description: string;
  /** At most {@link maxNotificationSummaryChars} characters of its result, or of its error. */
  summary: string;
}

/** A finished run as its notification announces it. */
export function notificationRun(run: RunRecord): NotificationRun {
  return { run_id: run.id, agent: run.agent, status: run.status, description: run.description, summary: notificationSummary(run) };
}

/** The start of a finished run's result (or error, or partial result) on one line. */
export function notificationSummary(run: RunRecord): string {
  const source = run.result?.text ?? (run.error ? `${run.error.kind}: ${run.error.message}` : null) ?? run.partial_result ?? '(no text)';
  const line = source.replace(/\s+/g, ' ').trim() || '(no text)';
  if (line.length <= maxNotificationSummaryChars) return line;
  return `${[...line].slice(0, maxNotificationSummaryChars - 1).join('')}…`;
}

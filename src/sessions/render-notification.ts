import type { RunRecord } from '../store/records.ts';

/** Longest summary of one run in a notification. */
const maxSummaryChars = 300;

/**
 * The user-role message that tells a parent its background runs finished (CONTRACT section 6):
 * `<subagent-notification>` with `run_id:`, `agent:`, `status:`, `description:` lines, a short
 * summary, and a hint to read the result with `agent_output`.
 */
export function renderNotification(runs: readonly RunRecord[]): string {
  const sections = runs.map((run) => {
    const lines = [`run_id: ${run.id}`, `agent: ${run.agent}`, `status: ${run.status}`, `description: ${run.description}`];
    lines.push(`summary: ${summarize(run)}`);
    return lines.join('\n');
  });
  const hint = runs.length === 1
    ? `Call agent_output with run_id ${runs[0].id} to read the full result.`
    : 'Call agent_output with each run_id to read the full results.';
  return `<subagent-notification>\n${sections.join('\n\n')}\n\n${hint}\n</subagent-notification>`;
}

function summarize(run: RunRecord): string {
  const source = run.result?.text ?? (run.error ? `${run.error.kind}: ${run.error.message}` : null) ?? run.partial_result ?? '(no text)';
  const line = source.replace(/\s+/g, ' ').trim() || '(no text)';
  if (line.length <= maxSummaryChars) return line;
  return `${[...line].slice(0, maxSummaryChars - 1).join('')}…`;
}

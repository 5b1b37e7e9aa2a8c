import type { RunRecord } from '../store/records.ts';
import { notificationRun } from './notification-runs.ts';

/**
 * The user-role message that tells a parent its background runs finished (docs/runs-and-limits.md):
 * `<subagent-notification>` with `run_id:`, `agent:`, `status:`, `description:` lines, a short
 * summary, and a hint to read the result with `agent_output`.
 */
export function renderNotification(runs: readonly RunRecord[]): string {
  const sections = runs.map((run) => {
    const { run_id, agent, status, description, summary } = notificationRun(run);
    return [`run_id: ${run_id}`, `agent: ${agent}`, `status: ${status}`, `description: ${description}`, `summary: ${summary}`].join('\n');
  });
  const hint =
    runs.length === 1 ? `Call agent_output with run_id ${runs[0].id} to read the full result.` : 'Call agent_output with each run_id to read the full results.';
  return `<subagent-notification>\n${sections.join('\n\n')}\n\n${hint}\n</subagent-notification>`;
}

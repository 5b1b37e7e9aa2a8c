import type { RunPatch } from '../store/store.ts';
import type { RunRecord, RunStatus } from '../store/records.ts';

/**
 * What a run's end writes about its notification (docs/runs-and-limits.md), decided on the run as
 * it stands at the move: a background (or promoted) run gets a pending notification, which is
 * marked delivered only in the commit that puts its message in the parent's transcript, and
 * keeps its lease owner until then, so recovery can tell a notification whose process died from
 * one a live process is about to deliver. None is sent for `canceled_by_parent`, nor for a run
 * the parent already read (`suppressed`). A foreground run gets none: its result goes to the
 * waiting parent. A notification the caller set itself (recovery) is kept.
 */
export function notificationAtEnd(run: RunRecord, to: RunStatus): RunPatch {
  // A workflow's run reports to its workflow, never to the session (section 22).
  if (run.notification !== null || run.mode !== 'background' || (run.workflow ?? null) !== null) return {};
  if (to === 'canceled_by_parent' || run.consumed_at !== null) return { notification: { delivered_at: null, suppressed: true } };
  return { notification: { delivered_at: null, suppressed: false }, lease_owner: run.lease_owner ?? null };
}

import type { RunLedger } from '../runs/run-ledger.ts';
import type { ApprovalRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import { ownerIsGone } from '../util/owner-liveness.ts';
import { delegationTool } from '../permissions/permission-rule.ts';

/**
 * Closes the pending asks of processes that are gone (crashed while a call waited): nobody is left
 * to act on an answer, and a recovered run asks again when it repeats the call. Each ends
 * `canceled` by `stop`, with its `approval-resolve` event on the run. Returns the closed asks.
 * An ask on a delegation (tool `agent`) whose run still waits `queued` stays: the run is held
 * for it, and whoever recovers the run waits for its answer (CONTRACT section 19).
 */
export async function closeOrphanedApprovals({ store, ledger, now }: { store: Store; ledger: RunLedger; now: Now }): Promise<ApprovalRecord[]> {
  const closed: ApprovalRecord[] = [];
  for (const approval of await store.listApprovals({ statuses: ['pending'] })) {
    if (!ownerIsGone(approval.owner)) continue;
    if (approval.tool === delegationTool && approval.run_id !== null && (await store.getRun(approval.run_id))?.status === 'queued') continue;
    const resolved = await store.resolveApproval({ id: approval.id, status: 'canceled', by: 'stop', at: now() });
    if (!resolved) continue;
    closed.push(resolved);
    if (resolved.run_id !== null) {
      await ledger.update(resolved.run_id, {}, { type: 'approval-resolve', data: { approval_id: resolved.id, decision: 'denied', by: 'stop' } });
    }
  }
  return closed;
}

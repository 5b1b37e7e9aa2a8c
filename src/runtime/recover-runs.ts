import { answerOrphanedCalls, callerGoneWarning } from '../executors/answer-orphaned-calls.ts';
import type { RunLedger } from '../runs/run-ledger.ts';
import type { RunManager } from '../runs/run-manager.ts';
import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import { ownerIsGone } from '../util/owner-liveness.ts';

/** What a recovery sweep did. */
export interface RecoveryReport {
  resumed: string[];
  abandoned: string[];
  /** Runs whose notification a dead process never delivered, delivered now. */
  notified: string[];
}

/** Options of {@link recoverRuns}. */
export interface RecoverRunsOptions {
  store: Store;
  ledger: RunLedger;
  runs: RunManager;
  ownerId: string;
  now: Now;
  leaseMs: number;
  /** Only runs of this parent session; all runs when absent. */
  sessionId?: string;
  notify: (run: RunRecord) => Promise<void>;
}

/**
 * Crash survival: finds queued or running runs whose owner died (lease expired, or its process is
 * gone on this host), takes them over one by one (only one process wins each), and either resumes
 * them from their stored transcript, as background runs that notify their parent, or, when they
 * cannot go on, marks them `abandoned` and notifies the parent of that. Before any run goes on or
 * any notification is written, every tool call the dead process left without a result gets one,
 * in the parents' and the runs' own transcripts (see {@link answerOrphanedCalls}), with the runs'
 * states as recovered. A foreground run whose waiting call is answered so while it still works
 * elsewhere (on a worker) is promoted: it notifies its parent when it ends.
 */
export async function recoverRuns(options: RecoverRunsOptions): Promise<RecoveryReport> {
  const { store, ledger, runs, ownerId, now } = options;
  const report: RecoveryReport = { resumed: [], abandoned: [], notified: [] };
  const candidates = await store.listRuns({ statuses: ['queued', 'running'], parent_session_id: options.sessionId, order: 'oldest' });
  const started = now();
  const expiresAt = new Date(Date.parse(started) + options.leaseMs).toISOString();
  const adopted: RunRecord[] = [];
  const abandoned: RunRecord[] = [];
  const transcripts = new Set<string>(options.sessionId ? [options.sessionId] : []);
  const claimedIds: string[] = [];
  for (const candidate of candidates) {
    if (candidate.lease_owner === ownerId) continue;
    const expired = candidate.lease_expires_at === null || candidate.lease_expires_at < started;
    if (!expired && !ownerIsGone(candidate.lease_owner)) continue;
    // A gone owner's lease is treated as over now, so the claim can win at once.
    const claimed = await store.claimRun(candidate.id, ownerId, expiresAt, expired ? started : '9999-12-31T23:59:59.999Z');
    if (!claimed) continue;
    claimedIds.push(claimed.id);
    transcripts.add(claimed.parent_session_id).add(claimed.child_session_id);
    // A nested run's parent run restarts its step from the stored transcript, where its call
    // reads that this run was abandoned: the old nested run has no one to report to. Top-level
    // runs go on.
    if (claimed.parent_run_id === null && (claimed.workflow ?? null) !== null) {
      // A workflow's run goes on as it was: its workflow (replayed) waits for it, not the session.
      const updated = await ledger.update(
        claimed.id,
        { warnings: [...claimed.warnings, { kind: 'recovered', at: now() }] },
        { type: 'warning', data: { kind: 'recovered', previous_owner: candidate.lease_owner } },
      );
      if (updated) {
        adopted.push(updated);
        continue;
      }
    }
    if (claimed.parent_run_id === null) {
      const at = now();
      const updated = await ledger.update(
        claimed.id,
        {
          mode: 'background',
          promoted_at: claimed.mode === 'foreground' ? at : claimed.promoted_at,
          warnings: [...claimed.warnings, { kind: 'recovered', at }],
        },
        { type: 'warning', data: { kind: 'recovered', previous_owner: candidate.lease_owner } },
      );
      if (updated) {
        adopted.push(updated);
        continue;
      }
    }
    // Its parent hears of it whatever its mode: the one waiting for it died.
    const ended = await ledger.transition(claimed.id, 'abandoned', {
      activity: { kind: 'finished', status: 'abandoned', detail: 'its process died' },
      // A workflow's run reports to its workflow, which reads its end, never to the session.
      notification: { delivered_at: null, suppressed: (claimed.workflow ?? null) !== null },
    });
    if (ended) abandoned.push(ended);
  }
  // Primary sessions whose turn died mid-step (with or without runs) are still marked running.
  if (!options.sessionId) {
    for (const session of await store.listSessions({ primaryOnly: true })) if (session.status === 'running') transcripts.add(session.id);
  }
  // A foreground run another process still carries out (a worker) is promoted when the call that
  // waited for it is answered: it notifies its parent when it ends.
  const promote = (run: RunRecord) => ledger.promote(run.id, callerGoneWarning);
  for (const sessionId of transcripts) await answerOrphanedCalls({ store, sessionId, now, leaseMs: options.leaseMs, takenOver: claimedIds, promote });
  for (const run of adopted) {
    runs.adopt(run);
    report.resumed.push(run.id);
  }
  for (const run of abandoned) {
    report.abandoned.push(run.id);
    await options.notify(run);
  }
  return report;
}

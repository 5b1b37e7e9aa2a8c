import { hostname } from 'node:os';
import type { Notifier } from '../sessions/notifier.ts';
import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import { ownerIsGone } from '../util/owner-liveness.ts';

/** Options of {@link deliverPendingNotifications}. */
export interface DeliverPendingNotificationsOptions {
  store: Store;
  notifier: Notifier;
  /** This process's identity in leases. */
  ownerId: string;
  now: Now;
  leaseMs: number;
  /** Only runs of this parent session; all runs when absent. */
  sessionId?: string;
}

/**
 * Crash survival of notifications: delivers every pending notification (a background run ended,
 * its message never reached the parent's transcript) whose process is gone. A run keeps its lease
 * owner while its notification is pending: this process's own are delivered unless already under
 * way here; a live process on this host is left to deliver its own; one of an unknown host is
 * presumed gone once the run ended more than a lease ago. Delivery is a compare-and-set, so a
 * notification delivered meanwhile by its owner is never sent twice. Resolves with the runs
 * delivered (coalesced per session as usual).
 */
export async function deliverPendingNotifications(options: DeliverPendingNotificationsOptions): Promise<string[]> {
  const { store, notifier, ownerId } = options;
  const pending = await store.listRuns({ notification_pending: true, parent_session_id: options.sessionId, order: 'oldest' });
  const lapsedBefore = new Date(Date.parse(options.now()) - options.leaseMs).toISOString();
  const orphaned = pending.filter((run) => !notifier.holds(run.id) && isOrphaned(run, ownerId, lapsedBefore));
  await Promise.all(orphaned.map((run) => notifier.runFinished(run)));
  const delivered = await Promise.all(orphaned.map((run) => store.getRun(run.id)));
  return delivered.filter((run) => run?.notification?.delivered_at != null).map((run) => run!.id);
}

function isOrphaned(run: RunRecord, ownerId: string, lapsedBefore: string): boolean {
  const owner = run.lease_owner;
  if (owner === null || owner === ownerId || ownerIsGone(owner)) return true;
  if (isOnThisHost(owner)) return false;
  return run.ended_at !== null && run.ended_at < lapsedBefore;
}

function isOnThisHost(owner: string): boolean {
  return owner.split(':')[0] === hostname();
}

/**
 * Whether a job failed because BullMQ's stalled-job recovery gave up on it: its lock expired (the
 * worker died or stopped answering) more often than `maxStalledCount` allows. BullMQ says so only
 * in the job's failed reason.
 */
export function isStalledFailure(reason: string): boolean {
  return /stalled more than allowable limit/i.test(reason);
}

import { hostname } from 'node:os';

/**
 * Whether the process named in a lease (`host:pid:tag`) is certainly gone: it ran on this host
 * and no process has its pid. Unknown hosts are never presumed dead; their leases must expire.
 */
export function ownerIsGone(owner: string | null): boolean {
  if (owner === null) return true;
  const [host, pidText] = owner.split(':');
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

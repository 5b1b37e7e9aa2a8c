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

/**
 * Whether the process named in a lease is certainly alive: it runs on this host and a process
 * has its pid. Owners on other hosts are never known to be alive.
 */
export function ownerIsAlive(owner: string | null): boolean {
  if (owner === null) return false;
  const [host, pidText] = owner.split(':');
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

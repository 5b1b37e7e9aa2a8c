import { hostname } from 'node:os';

/**
 * What can be told of the process named in a lease (`host:pid:tag`): `alive` or `gone` only for a
 * process of this host (a pid no process has is gone; EPERM means it exists under another user);
 * `unknown` for other hosts and malformed owners. No owner counts as gone.
 */
export function probeOwner(owner: string | null): 'alive' | 'gone' | 'unknown' {
  if (owner === null) return 'gone';
  const [host, pidText] = owner.split(':');
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return 'unknown';
  if (pid === process.pid) return 'alive';
  try {
    process.kill(pid, 0);
    return 'alive';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ESRCH' ? 'gone' : code === 'EPERM' ? 'alive' : 'unknown';
  }
}

/**
 * Whether the process named in a lease is certainly gone: it ran on this host and no process has
 * its pid. Unknown hosts are never presumed dead; their leases must expire.
 */
export function ownerIsGone(owner: string | null): boolean {
  return probeOwner(owner) === 'gone';
}

/**
 * Whether the process named in a lease is certainly alive: it runs on this host and a process
 * has its pid. Owners on other hosts are never known to be alive.
 */
export function ownerIsAlive(owner: string | null): boolean {
  return probeOwner(owner) === 'alive';
}

import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';

/** Options of {@link createLeaseKeeper}. */
export interface LeaseKeeperOptions {
  store: Store;
  now: Now;
  /** This process's identity in leases. */
  ownerId: string;
  /** How long a lease lasts without renewal. @default 15000 */
  leaseMs?: number;
  /** Whether this process holds any run now; renewals are skipped while it holds none. */
  holding: () => boolean;
  onError?: (error: unknown) => void;
}

/** Keeps this process's leases on the runs it executes (crash survival), apart from their lifecycle. */
export interface LeaseKeeper {
  /** The end of a lease taken or renewed now. */
  until(): string;
  close(): void;
}

/**
 * Renews the leases of every active run this process owns, three times per lease, so another
 * process takes a run over only once this one stopped renewing (it died). The run manager takes
 * and gives up leases with its state changes; this only keeps them alive in between, the way
 * BullMQ's lock manager extends the locks of a worker's jobs apart from the worker.
 */
export function createLeaseKeeper({ store, now, ownerId, leaseMs = 15_000, holding, onError = reportToDefaultLogger }: LeaseKeeperOptions): LeaseKeeper {
  // Asked for on every start and end of a run: the arithmetic is done on epoch milliseconds, and
  // the clock's string is parsed and the end formatted once per distinct time, not per call.
  let lastNow = '';
  let lastUntil = '';
  const until = () => {
    const at = now();
    if (at !== lastNow) {
      lastNow = at;
      lastUntil = new Date(Date.parse(at) + leaseMs).toISOString();
    }
    return lastUntil;
  };
  const timer = setInterval(
    () => {
      if (holding()) store.renewLeases(ownerId, until()).catch(onError);
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  return {
    until,
    close() {
      clearInterval(timer);
    },
  };
}

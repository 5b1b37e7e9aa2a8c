import { systemNowMs } from '../util/clock.ts';

/** Waits `ms` unless `signal` aborts first (then rejects with its reason). */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real timer, abortable. */
export const realSleep: Sleep = function realSleep(ms, signal) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
};

/**
 * One gate per provider, shared by every request of the runtime to it: when the provider
 * answers 429, the gate closes until the time it announced (or the backoff delay), and all
 * requests to that provider wait for it together instead of each finding out on its own.
 */
export interface ProviderGates {
  /** Resolves once the provider's gate is open (at once when it is). Rejects when `signal` aborts. */
  wait(provider: string, signal?: AbortSignal): Promise<void>;
  /** Closes the provider's gate until `untilMs` (epoch milliseconds); a later time wins. */
  closeUntil(provider: string, untilMs: number): void;
  /** When the provider's gate opens (epoch milliseconds), or undefined when it is open. */
  openAt(provider: string): number | undefined;
}

/** Options of {@link createProviderGates}. */
export interface ProviderGatesOptions {
  /** The clock in epoch milliseconds. @default systemNowMs */
  nowMs?: () => number;
  /** @default real timers */
  sleep?: Sleep;
}

/** Creates the runtime's {@link ProviderGates}. */
export function createProviderGates({ nowMs = systemNowMs, sleep = realSleep }: ProviderGatesOptions = {}): ProviderGates {
  const closedUntil = new Map<string, number>();
  const openAt = (provider: string) => {
    const until = closedUntil.get(provider);
    if (until === undefined) return undefined;
    if (until > nowMs()) return until;
    closedUntil.delete(provider);
    return undefined;
  };
  return {
    async wait(provider, signal) {
      // The gate may close again (or later) while we wait: look again after each sleep.
      for (let until = openAt(provider); until !== undefined; until = openAt(provider)) {
        await sleep(until - nowMs(), signal);
      }
    },
    closeUntil(provider, untilMs) {
      if (untilMs > (closedUntil.get(provider) ?? 0)) closedUntil.set(provider, untilMs);
    },
    openAt,
  };
}

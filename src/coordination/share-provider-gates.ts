import type { ProviderGates } from '../models/provider-gates.ts';
import { systemNowMs, type NowMs } from '../util/clock.ts';
import type { Coordination } from './coordination.ts';

/** The runtime's 429 gates, shared with every process on the coordination; see {@link shareProviderGates}. */
export interface SharedProviderGates extends ProviderGates {
  /** Stops hearing other processes' gates. */
  close(): void;
}

/**
 * Shares a runtime's 429 gates with the other processes: when a provider answers 429 here, the
 * `rate-limited` signal closes that provider's gate in every process (workers on other machines
 * included) for the same time, so they back off together instead of each finding out with a 429
 * of its own. A process starting during the pause learns of it where the engine keeps it (Redis
 * keeps it in a key with that lifetime). `nowMs` is the runtime's clock (the gates' own, too).
 */
export function shareProviderGates(gates: ProviderGates, coordination: Coordination, nowMs: NowMs = systemNowMs): SharedProviderGates {
  const listening = new Map<string, () => void>();
  const listen = (provider: string) => {
    if (listening.has(provider)) return;
    listening.set(
      provider,
      coordination.subscribe('rate-limited', provider, (signal) => gates.closeUntil(provider, nowMs() + signal.delay_ms)),
    );
  };
  return {
    wait(provider, signal) {
      listen(provider);
      return gates.wait(provider, signal);
    },
    openAt(provider) {
      listen(provider);
      return gates.openAt(provider);
    },
    closeUntil(provider, untilMs) {
      listen(provider);
      gates.closeUntil(provider, untilMs);
      // A delay, not a time: the processes' clocks need not agree.
      const delay = untilMs - nowMs();
      if (delay > 0) coordination.publish({ type: 'rate-limited', provider, delay_ms: delay });
    },
    close() {
      for (const off of listening.values()) off();
      listening.clear();
    },
  };
}

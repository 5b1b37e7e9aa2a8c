import { systemNowMs, type NowMs } from '../../util/clock.ts';

/**
 * Reports an error once while it repeats: a Redis server that is down makes every connection
 * report the same error at each reconnection attempt, several times a second. The same message
 * is reported again only after `quietMs`.
 */
export function quietErrors(report: (error: unknown) => void, quietMs = 30_000, nowMs: NowMs = systemNowMs): (error: unknown) => void {
  const lastSeen = new Map<string, number>();
  return function reportQuietly(error: unknown) {
    const message = error instanceof Error ? error.message : String(error);
    const at = nowMs();
    const last = lastSeen.get(message);
    lastSeen.set(message, at);
    if (last !== undefined && at - last < quietMs) return;
    if (lastSeen.size > 100) lastSeen.clear();
    report(error);
  };
}

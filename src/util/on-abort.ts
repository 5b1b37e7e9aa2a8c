/** Callbacks waiting on each signal: one `abort` listener per signal, however many wait on it. */
const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` once when `signal` aborts; returns a function that forgets it. Many callbacks
 * on one signal share a single listener: a parent's turn waits on hundreds of runs at once, and
 * each `addEventListener` on a Node `EventTarget` walks the listeners already there.
 *
 * @example const forget = onAbort(signal, () => reject(signal.reason)); ...; forget();
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = waiting.get(signal);
  if (!callbacks) {
    const set = new Set<() => void>();
    callbacks = set;
    waiting.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        waiting.delete(signal);
        for (const each of set) each();
      },
      { once: true },
    );
  }
  const set = callbacks;
  set.add(callback);
  return () => {
    set.delete(callback);
  };
}

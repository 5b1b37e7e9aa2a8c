/**
 * Adds `key` to a set whose entries matter only while they are busy: once the set has grown to
 * `threshold` entries, the quiet ones (`isQuiet`) go, all but the key being added, and the next
 * pruning waits until the set has doubled again. The cost is amortized over the additions, and
 * a long-lived process keeps only what is busy, plus at most as many quiet entries again.
 */
export function addPruning<K>(set: Set<K>, key: K, isQuiet: (key: K) => boolean, state: { threshold: number; minimum: number }): void {
  set.add(key);
  if (set.size < state.threshold) return;
  for (const entry of set) if (entry !== key && isQuiet(entry)) set.delete(entry);
  state.threshold = Math.max(state.minimum, set.size * 2);
}

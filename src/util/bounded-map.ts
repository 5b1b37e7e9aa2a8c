/**
 * Sets `key` in a map used as a bounded cache: when a new key finds the map holding `limit`
 * entries, the one added longest ago is dropped first. For caches whose forgotten entries are
 * simply looked up again, so a long-lived process does not grow with every key it ever saw.
 * Updating a key keeps its place (first in, first out): that costs one map write, where moving
 * it to the end would cost two on every update of a hot key.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  if (!map.has(key) && map.size >= limit) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/**
 * Sets `key` in a map used as a bounded cache: the entry becomes the newest, and when the map
 * already holds `limit` entries, the one set longest ago is dropped first. For caches whose
 * forgotten entries are simply looked up again, so a long-lived process does not grow with every
 * key it ever saw.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  map.delete(key);
  if (map.size >= limit) map.delete(map.keys().next().value!);
  map.set(key, value);
}

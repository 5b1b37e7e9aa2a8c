import type { Store } from './store.ts';

/**
 * Reads the store's external version (see `Store.externalVersion`) every `everyMs` and calls
 * `onChange` each time it moved: another connection committed. The timer does not keep the
 * process alive. Returns a function that stops watching, or undefined when there is nothing to
 * watch: the store has no external version, or its first read failed (`onError` is told). A
 * later read that fails stops the watch and is told to `onError` too.
 *
 * @example
 * const stop = watchExternalVersion(store, 20, () => pollEverything(), report);
 */
export function watchExternalVersion(
  store: Pick<Store, 'externalVersion'>,
  everyMs: number,
  onChange: () => void,
  onError: (error: unknown) => void,
): (() => void) | undefined {
  const read = store.externalVersion?.bind(store);
  if (read === undefined) return undefined;
  let seen: number;
  try {
    seen = read();
  } catch (error) {
    onError(error);
    return undefined;
  }
  const timer = setInterval(function checkExternalVersion() {
    let version: number;
    try {
      version = read();
    } catch (error) {
      clearInterval(timer);
      onError(error);
      return;
    }
    if (version === seen) return;
    seen = version;
    onChange();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Keeps the writes of one key (a run, a session) in the order they were made when some of them
 * wait for their commit and others are acknowledged at once.
 */
export interface KeyOrder {
  /**
   * Calls `write` now if no earlier write of `keys` is still waiting, else once they are all done.
   * `write` returns a plain value when it is done at once (held), or a promise for writes that
   * wait (their commit); later writes of the same keys wait for that promise to settle.
   */
  run<T>(keys: readonly string[], write: () => T | Promise<T>): Promise<T>;
  /** Resolves once every write that was waiting when called has been started. */
  started(): Promise<void>;
}

const ignore = () => {};

/**
 * The order of writes per key for the Postgres store: a held append must not take a seq before
 * a compare-and-set of the same run that was made earlier and waits for its commit, or a message
 * jump ahead of a notification committed into the same session.
 *
 * @example
 * const order = createKeyOrder();
 * await order.run([`r:${runId}`], () => hold(events));
 */
export function createKeyOrder(): KeyOrder {
  const waiting = new Map<string, Promise<void>>();
  const starts = new Set<Promise<void>>();

  function mark(keys: readonly string[], done: Promise<unknown>): void {
    const settled = done.then(ignore, ignore);
    for (const key of keys) waiting.set(key, settled);
    void settled.then(() => {
      for (const key of keys) if (waiting.get(key) === settled) waiting.delete(key);
    });
  }

  return {
    run<T>(keys: readonly string[], write: () => T | Promise<T>): Promise<T> {
      let before: Array<Promise<void>> | null = null;
      for (const key of keys) {
        const wait = waiting.get(key);
        if (wait) (before ??= []).push(wait);
      }
      if (before === null) {
        let result: T | Promise<T>;
        try {
          result = write();
        } catch (error) {
          return Promise.reject(error);
        }
        if (!(result instanceof Promise)) return Promise.resolve(result);
        mark(keys, result);
        return result;
      }
      let start!: () => void;
      const started = new Promise<void>((resolve) => (start = resolve));
      starts.add(started);
      const result = Promise.all(before).then(() => {
        starts.delete(started);
        start();
        return write();
      });
      mark(keys, result);
      return result;
    },

    async started() {
      if (starts.size > 0) await Promise.all([...starts]);
    },
  };
}

/** Resolves on the first SIGINT or SIGTERM (or when `signal` aborts, for tests): how a long-running command (`serve`, `worker`) waits to be stopped. */
export function untilStopped(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    signal?.addEventListener('abort', stop, { once: true });
  });
}

import { StoreFailureError } from '../store/store-failure-error.ts';
import type { Store } from '../store/store.ts';

/** What the runtime knows of its store's failure (see `Store.onFailure`). */
export interface StoreFailureWatch {
  /** The failure, once the store stopped taking writes; null while it works. */
  readonly failure: StoreFailureError | null;
  /** Aborted, with the failure as its reason, when the store stops taking writes. */
  readonly signal: AbortSignal;
  /** Stops listening. */
  close(): void;
}

/**
 * Listens for the store's failure and calls `onFailure` once with it: the moment the runtime
 * must stop its runs' work, since none of it can be stored any more. Rejections of the writes
 * that follow carry the same error; `onFailure` is where it is reported, once.
 */
export function watchStoreFailure(store: Store, onFailure: (failure: StoreFailureError) => void): StoreFailureWatch {
  const controller = new AbortController();
  let failure: StoreFailureError | null = null;
  const stopListening = store.onFailure?.((error) => {
    if (failure) return;
    failure = error;
    controller.abort(error);
    onFailure(error);
  });
  return {
    get failure() {
      return failure;
    },
    signal: controller.signal,
    close() {
      stopListening?.();
    },
  };
}

/** Whether `error` is a store's failure, or caused by one (wrapped in a run's or a turn's error). */
export function isStoreFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current !== null && current !== undefined && depth < 10; depth++) {
    if (StoreFailureError.isInstance(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

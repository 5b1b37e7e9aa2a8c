/** Marks an attempt aborted because the provider did not answer in time. */
export class AttemptTimeout extends Error {
  constructor() {
    super('The model provider did not answer in time.');
    this.name = 'AttemptTimeout';
  }
}

/**
 * Watches the deadlines of a model's attempts with one timer, running only while an attempt is
 * watched, instead of a timer per request and chunk (setting timers cost more than the requests'
 * other bookkeeping). An attempt expires between its deadline and a tenth of the timeout later.
 * @param nowMs the clock deadlines are read on, in epoch milliseconds (reliableModel's `nowMs`)
 */
export function createWatchdog(timeoutMs: number, nowMs: () => number = Date.now) {
  const deadlines = new Map<() => void, number>();
  let interval: NodeJS.Timeout | undefined;
  const periodMs = Math.min(1000, Math.max(5, Math.floor(timeoutMs / 10)));
  function check() {
    const now = nowMs();
    for (const [expire, deadline] of deadlines) {
      if (deadline > now) continue;
      deadlines.delete(expire);
      expire();
    }
    if (deadlines.size === 0) {
      clearInterval(interval);
      interval = undefined;
    }
  }
  return {
    /** (Re)starts the clock of `expire`'s attempt. */
    arm(expire: () => void) {
      deadlines.set(expire, nowMs() + timeoutMs);
      interval ??= setInterval(check, periodMs);
    },
    disarm(expire: () => void) {
      deadlines.delete(expire);
    },
  };
}

export type Watchdog = ReturnType<typeof createWatchdog>;

/** One attempt's abort controller, following the caller's signal, with a restartable inactivity clock. */
export function attemptControl(callerSignal: AbortSignal | undefined, watchdog: Watchdog) {
  const controller = new AbortController();
  let timedOut = false;
  /** Rejects what the attempt waits for now, when it is aborted. */
  let rejectPending: ((reason: unknown) => void) | undefined;
  const abort = (reason: unknown) => {
    if (controller.signal.aborted) return;
    controller.abort(reason);
    rejectPending?.(reason);
    rejectPending = undefined;
  };
  const onCallerAbort = () => abort(callerSignal!.reason);
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  const expire = () => {
    timedOut = true;
    abort(new AttemptTimeout());
  };
  const control = {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    /**
     * Settles like `promise`, or rejects as soon as the attempt is aborted: a model that ignores
     * its abort signal cannot hold the attempt past its timeout.
     */
    race<T>(promise: PromiseLike<T>): Promise<T> {
      if (controller.signal.aborted) {
        // The call was made and will fail on its own: nobody may be left to hear it.
        Promise.resolve(promise).then(undefined, () => {});
        return Promise.reject(controller.signal.reason);
      }
      return new Promise<T>((resolve, reject) => {
        rejectPending = reject;
        promise.then(
          (value) => {
            rejectPending = undefined;
            resolve(value);
          },
          (error: unknown) => {
            rejectPending = undefined;
            reject(error);
          },
        );
      });
    },
    /** (Re)starts the inactivity clock: the request was sent, or a chunk arrived. */
    touch() {
      watchdog.arm(expire);
    },
    /** Stops the clock while nobody waits on the provider (the consumer has not asked for more). */
    pause() {
      watchdog.disarm(expire);
    },
    /** Ends the attempt's clock and link; `abandon` also aborts the request. */
    end(abandon = false) {
      watchdog.disarm(expire);
      callerSignal?.removeEventListener('abort', onCallerAbort);
      if (abandon) abort(new Error('The attempt was abandoned.'));
    },
  };
  control.touch();
  return control;
}

export type AttemptControl = ReturnType<typeof attemptControl>;

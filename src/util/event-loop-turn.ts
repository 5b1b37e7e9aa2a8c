/** When the event loop last reached its check phase (where `setImmediate` callbacks run). */
let turnedAt = performance.now();
let watching = false;

function watchTurn(): void {
  if (watching) return;
  watching = true;
  setImmediate(() => {
    watching = false;
    turnedAt = performance.now();
  }).unref();
}

/**
 * Lets the event loop turn when the current chain of promises has kept it busy for `busyMs`:
 * resolves after a `setImmediate` then, and at once (with no extra tick) otherwise. A model call
 * over the network yields anyway; a model that answers at once (a mock, a cache) would otherwise
 * let hundreds of agent loops run as one long chain of microtasks in which no timer fires (the
 * notifications' coalescing, auto-resume), no I/O is read and no garbage is collected while idle.
 */
export function letEventLoopTurn(busyMs = 50): Promise<void> | undefined {
  watchTurn();
  if (performance.now() - turnedAt < busyMs) return undefined;
  return new Promise((resolve) => setImmediate(resolve));
}

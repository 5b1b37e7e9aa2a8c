/** What {@link followChanges} returns. */
export interface ChangeFollower {
  /** Something may have changed: read again (one read at a time; a poke during a read gets one more). */
  poke(): void;
  /** Stops: no more reads start and no value is emitted any more. */
  stop(): void;
}

/**
 * Follows a value that is read on demand, such as a session's state: each {@link ChangeFollower.poke}
 * reads it again, and `emit` gets every value that differs (as JSON) from the last one emitted.
 * Reads never overlap, and pokes that arrive during a read are answered by one read after it.
 *
 * @example
 * const follower = followChanges(() => readSessionState(store, id), (state) => send(state), report);
 * follower.poke();
 */
export function followChanges<T>(read: () => Promise<T>, emit: (value: T) => void, onError: (error: unknown) => void): ChangeFollower {
  let last: string | undefined;
  let reading = false;
  let again = false;
  let stopped = false;

  async function readLoop(): Promise<void> {
    reading = true;
    try {
      do {
        again = false;
        const value = await read();
        const text = JSON.stringify(value);
        if (stopped || text === last) continue;
        last = text;
        emit(value);
      } while (again && !stopped);
    } catch (error) {
      if (!stopped) onError(error);
    } finally {
      reading = false;
    }
  }

  return {
    poke() {
      if (stopped) return;
      if (reading) again = true;
      else void readLoop();
    },
    stop() {
      stopped = true;
    },
  };
}

import type { CadreEvent } from '../runs/run-bus.ts';
import type { Cadre } from '../runtime/cadre.ts';

/** Changes to the sessions list, shared by every live view of it in one server. */
export interface ListChanges {
  /** Calls `changed` at most once per period after something moved a session; returns the stop. */
  watch(changed: () => void): () => void;
  /** Something outside this process's events may have changed the list (another process committed). */
  poke(): void;
}

/** Options of {@link shareListChanges}. */
export interface ListChangesOptions {
  /** Milliseconds a change waits for more changes to join it: a list is read again at most this often. @default 1000 */
  listChangeMs?: number;
}

/** Run events that may move a session's row in the list (a run queued, started or ended). */
const rowEvents: ReadonlySet<string> = new Set(['run-queued', 'run-start', 'run-end']);

/** Whether an event may change a session's state or its row in the sessions list. */
export function movesSessionRow(event: CadreEvent): boolean {
  return event.type === 'session-status' || event.type === 'approval' || (event.type === 'run-event' && rowEvents.has(event.event.type));
}

/**
 * One listener of the process's events for all the sessions-list views of a server: an event
 * costs one check however many dashboards are open, and each view hears one change per period.
 * It listens only while some view watches.
 */
export function shareListChanges(cadre: Pick<Cadre, 'subscribe'>, { listChangeMs = 1000 }: ListChangesOptions = {}): ListChanges {
  const watchers = new Set<() => void>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let unsubscribe: (() => void) | undefined;

  const poke = () => {
    if (timer !== undefined || watchers.size === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      for (const changed of watchers) changed();
    }, listChangeMs);
  };

  return {
    watch(changed) {
      watchers.add(changed);
      unsubscribe ??= cadre.subscribe((event) => {
        if (movesSessionRow(event)) poke();
      });
      return () => {
        watchers.delete(changed);
        if (watchers.size > 0) return;
        unsubscribe?.();
        unsubscribe = undefined;
        clearTimeout(timer);
        timer = undefined;
      };
    },
    poke,
  };
}

import type { Store } from '../store/store.ts';
import { setBounded } from '../util/bounded-map.ts';

/** Sessions whose primary session is remembered. */
const remembered = 10_000;

/**
 * The primary session a session belongs to (asks and "always" rules are per primary session):
 * the walk up the session tree through the store, each answer remembered, since a session's place
 * in the tree never changes once it exists.
 */
export function createPrimarySessions(store: Pick<Store, 'getSession' | 'getRun'>): (sessionId: string) => Promise<string> {
  const primaries = new Map<string, string>();
  return async function primarySessionOf(sessionId) {
    const known = primaries.get(sessionId);
    if (known !== undefined) return known;
    let id = sessionId;
    for (let depth = 0; depth < 64; depth++) {
      const session = await store.getSession(id);
      if (!session) return id;
      if (session.parent_run_id === null) break;
      const run = await store.getRun(session.parent_run_id);
      if (!run) return id;
      id = primaries.get(run.parent_session_id) ?? run.parent_session_id;
      if (primaries.has(run.parent_session_id)) break;
    }
    setBounded(primaries, sessionId, id, remembered);
    return id;
  };
}

import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';

/** How deep a family is walked: far past any `limits.maxDepth` a person sets, and a guard against a loop of bad data. */
const maxFamilyDepth = 16;

/**
 * A session's runs and the runs they started, at any depth, sorted by id (oldest first). Depth is
 * small (`limits.maxDepth`), so one query per session and level is cheap enough.
 */
export async function listFamilyRuns(store: Pick<Store, 'listRuns'>, sessionId: string): Promise<RunRecord[]> {
  const collected: RunRecord[] = [];
  let sessionIds = [sessionId];
  for (let depth = 0; depth < maxFamilyDepth && sessionIds.length > 0; depth++) {
    const level = (await Promise.all(sessionIds.map((id) => store.listRuns({ parent_session_id: id, order: 'oldest' })))).flat();
    collected.push(...level);
    sessionIds = level.map((run) => run.child_session_id);
  }
  return collected.sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
}

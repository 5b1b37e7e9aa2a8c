import type { Store } from '../store/store.ts';
import type { Coordination } from './coordination.ts';
import { createPollingCoordination } from './polling-coordination.ts';

/**
 * The coordination that fits a database spec: LISTEN/NOTIFY for a `postgres://` URL (loaded only
 * then), polling the store otherwise.
 */
export async function openCoordination(db: string, store: Store, onError?: (error: unknown) => void): Promise<Coordination> {
  if (/^postgres(ql)?:\/\//i.test(db.trim())) {
    const { createPostgresCoordination } = await import('./postgres-coordination.ts');
    return createPostgresCoordination({ connectionString: db.trim(), store, onError });
  }
  return createPollingCoordination({ store, onError });
}

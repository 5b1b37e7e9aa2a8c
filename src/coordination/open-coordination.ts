import type { Store } from '../store/store.ts';
import type { Coordination } from './coordination.ts';
import { createPollingCoordination } from './polling-coordination.ts';

/**
 * The coordination that fits a database spec: publish/subscribe on the queue's Redis when runs go
 * through a queue (their workers' live events need it), else LISTEN/NOTIFY for a `postgres://`
 * URL (each loaded only then), else polling the store.
 */
export async function openCoordination(db: string, store: Store, onError?: (error: unknown) => void, queue?: string): Promise<Coordination> {
  if (queue !== undefined) {
    const { createRedisCoordination } = await import('./redis-coordination.ts');
    return createRedisCoordination({ url: queue, store, onError });
  }
  if (/^postgres(ql)?:\/\//i.test(db.trim())) {
    const { createPostgresCoordination } = await import('./postgres-coordination.ts');
    return createPostgresCoordination({ connectionString: db.trim(), store, onError });
  }
  return createPollingCoordination({ store, onError });
}

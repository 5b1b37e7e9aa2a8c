import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresCoordination } from '../../src/coordination/postgres-coordination.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { dropSchemas, freshSchema, postgresReason, postgresUrl, schemaUrl } from './service-urls.ts';

const schemas: string[] = [];
afterAll(() => dropSchemas(schemas));

describe.skipIf(!postgresUrl)(`postgres coordination${postgresReason}`, () => {
  it('carries a signal from one process to another over LISTEN/NOTIFY in well under 250 ms, and not to another schema', async () => {
    const schema = freshSchema();
    const other = freshSchema();
    schemas.push(schema, other);
    const store = await openPostgresStore({ connectionString: schemaUrl(schema) });
    const otherStore = await openPostgresStore({ connectionString: schemaUrl(other) });
    const sender = await createPostgresCoordination({ connectionString: schemaUrl(schema), store });
    const receiver = await createPostgresCoordination({ connectionString: schemaUrl(schema), store });
    const stranger = await createPostgresCoordination({ connectionString: schemaUrl(other), store: otherStore });
    const heardByStranger: unknown[] = [];
    stranger.subscribe('stop-requested', 'host:1:worker', (signal) => heardByStranger.push(signal));
    const latencies: number[] = [];
    for (let round = 0; round < 20; round++) {
      const heard = new Promise<number>((resolve) => {
        const off = receiver.subscribe('stop-requested', 'host:1:worker', () => {
          off();
          resolve(performance.now());
        });
      });
      const sentAt = performance.now();
      sender.publish({ type: 'stop-requested', run_id: `run_${round}`, owner: 'host:1:worker', cause: 'user', reason: null });
      latencies.push((await heard) - sentAt);
    }
    latencies.sort((a, b) => a - b);
    expect(latencies[latencies.length - 1]).toBeLessThan(250);
    expect(heardByStranger).toEqual([]);
    for (const each of [sender, receiver, stranger]) await each.close();
    await Promise.all([store.close(), otherStore.close()]);
  });
});

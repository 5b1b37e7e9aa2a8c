import { hostname } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { eventFixture, runFixture } from '../store/store-fixtures.ts';
import type { RunRecord } from '../store/records.ts';
import { systemNow } from '../util/clock.ts';
import { watchRunsElsewhere } from './watch-runs-elsewhere.ts';

/** A run manager whose runs end when the test says. */
function remoteRuns() {
  const ends = new Map<string, (run: RunRecord) => void>();
  return {
    wait: (runId: string, { signal }: { signal?: AbortSignal } = {}) =>
      new Promise<RunRecord>((resolve) => {
        ends.set(runId, resolve);
        signal?.addEventListener('abort', () => resolve(runFixture({ id: runId })), { once: true });
      }),
    end: (run: RunRecord) => ends.get(run.id)?.(run),
  };
}

async function setup(holder: string, leaseMs = 15_000) {
  const store = createSqliteStore({ path: ':memory:' });
  const running = runFixture({ id: 'run_1', mode: 'background', status: 'running', lease_owner: 'worker:1:w', lease_expires_at: '2099-01-01T00:00:00.000Z' });
  await store.insertRun(running, eventFixture('run_1'));
  const runs = remoteRuns();
  const delivered: string[] = [];
  const deliver = vi.fn(async (sessionId: string) => {
    delivered.push(sessionId);
  });
  const watch = watchRunsElsewhere({
    store,
    runs,
    deliver,
    leaseMs,
    now: systemNow,
    onError: (error) => {
      throw error;
    },
  });
  /** Ends the run elsewhere, its notification pending in `holder`'s name. */
  const end = async () => {
    const ended = await store.updateRun('run_1', {
      ended_at: systemNow(),
      lease_owner: holder,
      lease_expires_at: null,
      notification: { delivered_at: null, suppressed: false },
    });
    runs.end({ ...ended!, status: 'completed' });
  };
  return { store, running, watch, end, deliver, delivered };
}

describe('watchRunsElsewhere', () => {
  it('waits for a run another process carries out, then delivers what its parent session is owed; the session counts as busy meanwhile', async () => {
    // A process of this host that is gone (no process has that pid).
    const { running, watch, end, delivered } = await setup(`${hostname()}:2147483646:h`);
    watch.watch(running);
    watch.watch(running);
    expect(watch.count('ses_1')).toBe(1);
    expect(delivered).toEqual([]);
    await end();
    await vi.waitFor(() => expect(watch.count('ses_1')).toBe(0));
    expect(delivered).toEqual(['ses_1']);
    watch.close();
  });

  it('looks again once the lease lapsed when the holder is on another host and the notification is still pending', async () => {
    const { running, watch, end, deliver } = await setup('another-host:1:h', 50);
    watch.watch(running);
    await end();
    await vi.waitFor(() => expect(deliver).toHaveBeenCalledTimes(2), { timeout: 2_000 });
    expect(watch.count('ses_1')).toBe(0);
    watch.close();
  });

  it('stops waiting when closed, and delivers nothing', async () => {
    const { running, watch, deliver } = await setup('another-host:1:h');
    watch.watch(running);
    watch.close();
    await vi.waitFor(() => expect(watch.count('ses_1')).toBe(0));
    expect(deliver).not.toHaveBeenCalled();
    watch.watch(running);
    expect(watch.count('ses_1')).toBe(0);
  });
});

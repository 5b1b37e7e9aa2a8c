import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisCoordination } from '../../src/coordination/redis-coordination.ts';
import type { Coordination, CoordinationSignal } from '../../src/coordination/coordination.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { runFixture } from '../../src/store/store-fixtures.ts';
import { redisUrl } from './service-urls.ts';

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const each of open.splice(0).reverse()) await each.close();
});

const source = resolve(import.meta.dirname, '..', '..', 'src', 'coordination', 'redis-coordination.ts');
const storeSource = resolve(import.meta.dirname, '..', '..', 'src', 'store', 'sqlite', 'sqlite-store.ts');

/** Publishes the signals from another process, on the same Redis and prefix. */
async function publishElsewhere(url: string, signals: CoordinationSignal[]): Promise<void> {
  const program = `
    import { createRedisCoordination } from ${JSON.stringify(source)};
    import { createSqliteStore } from ${JSON.stringify(storeSource)};
    const coordination = createRedisCoordination({ url: ${JSON.stringify(url)}, store: createSqliteStore({ path: ':memory:' }) });
    await new Promise((done) => setTimeout(done, 300));
    for (const signal of ${JSON.stringify(signals)}) coordination.publish(signal);
    await new Promise((done) => setTimeout(done, 300));
    await coordination.close();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((done) => child.on('close', done));
  expect(code, stderr).toBe(0);
}

/** The types of the signals published on the shared channel of `prefix`, as they are heard. */
async function listenToShared(prefix: string): Promise<string[]> {
  const heard: string[] = [];
  const probe = new Redis(redisUrl!);
  open.push({ close: () => probe.disconnect() });
  await probe.subscribe(`${prefix}:signals`);
  probe.on('message', (_channel: string, payload: string) => heard.push((JSON.parse(payload) as { signal: CoordinationSignal }).signal.type));
  return heard;
}

function coordinationOn(url: string): Coordination {
  const store = createSqliteStore({ path: ':memory:' });
  const coordination = createRedisCoordination({ url, store });
  open.push(store, coordination);
  return coordination;
}

describe.skipIf(!redisUrl)(`Redis coordination between processes${redisUrl ? '' : ' [skipped: set CADRE_TEST_REDIS_URL, as .ci/run does]'}`, () => {
  it('carries the signals of another process on the same prefix, and none of another prefix', async () => {
    const prefix = `coordination-${process.pid}-${Date.now()}`;
    const url = `${redisUrl}?prefix=${prefix}`;
    const coordination = coordinationOn(url);
    const heard: CoordinationSignal[] = [];
    coordination.subscribe('stop-requested', 'host:1:worker', (signal) => heard.push(signal));
    coordination.subscribe('approval-answered', 'apr_1', (signal) => heard.push(signal));
    await new Promise((done) => setTimeout(done, 200));
    await publishElsewhere(`${redisUrl}?prefix=${prefix}-other`, [{ type: 'approval-answered', approval_id: 'apr_1' }]);
    await publishElsewhere(url, [
      { type: 'stop-requested', run_id: 'run_1', owner: 'host:1:worker', cause: 'user', reason: null },
      { type: 'approval-answered', approval_id: 'apr_1' },
    ]);
    expect(heard).toEqual([
      { type: 'stop-requested', run_id: 'run_1', owner: 'host:1:worker', cause: 'user', reason: null },
      { type: 'approval-answered', approval_id: 'apr_1' },
    ]);
  });

  it('carries run output to the process listening for its host only, on a channel of that host, until it stops listening', async () => {
    const prefix = `output-${process.pid}-${Date.now()}`;
    const url = `${redisUrl}?prefix=${prefix}`;
    const host = coordinationOn(url);
    const other = coordinationOn(url);
    const heard: CoordinationSignal[] = [];
    const off = host.subscribe('run-output', 'host:1:a', (signal) => heard.push(signal));
    other.subscribe('run-output', 'host:2:b', (signal) => heard.push(signal));
    const shared = await listenToShared(prefix);
    await new Promise((done) => setTimeout(done, 200));
    const output: CoordinationSignal = { type: 'run-output', host: 'host:1:a', events: [{ type: 'text-delta', session_id: 'ses_1', text: 'Hello' }] };
    await publishElsewhere(url, [output, { type: 'views-watched', host: 'host:1:a', for_ms: 6_000 }]);
    expect(heard).toEqual([output]);
    // Every process hears the shared channel; run output is not on it.
    expect(shared).toEqual(['views-watched']);
    off();
    await new Promise((done) => setTimeout(done, 100));
    await publishElsewhere(url, [output]);
    expect(heard).toHaveLength(1);
  });

  it('carries live events on a channel of their own, to the processes that listen for them only', async () => {
    const prefix = `live-${process.pid}-${Date.now()}`;
    const url = `${redisUrl}?prefix=${prefix}`;
    const host = coordinationOn(url);
    const worker = coordinationOn(url);
    const heard: string[] = [];
    host.subscribe('live-event', 'ses_1', (signal) => heard.push(`host ${signal.event.type}`));
    worker.subscribe('stop-requested', 'host:2:w', (signal) => heard.push(`worker ${signal.type}`));
    const shared = await listenToShared(prefix);
    await new Promise((done) => setTimeout(done, 200));
    const live: CoordinationSignal = {
      type: 'live-event',
      parent_session_id: 'ses_1',
      run: runFixture({ id: 'run_1', parent_session_id: 'ses_1' }),
      event: { type: 'activity', at: '2026-01-01T00:00:00.000Z', data: { kind: 'text', text: 'working' } },
    };
    await publishElsewhere(url, [live, { type: 'stop-requested', run_id: 'run_1', owner: 'host:2:w', cause: 'user', reason: null }]);
    expect(heard.sort()).toEqual(['host activity', 'worker stop-requested']);
    // Every process hears the shared channel; live events are not on it.
    expect(shared).toEqual(['stop-requested']);
  });

  it("shares another process's 429 pause of a provider, also with a process that listens only after it began", async () => {
    const url = `${redisUrl}?prefix=pause-${process.pid}-${Date.now()}`;
    const early = coordinationOn(url);
    const heard: number[] = [];
    early.subscribe('rate-limited', 'anthropic', (signal) => heard.push(signal.delay_ms));
    await new Promise((done) => setTimeout(done, 200));
    await publishElsewhere(url, [{ type: 'rate-limited', provider: 'anthropic', delay_ms: 20_000 }]);
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBe(20_000);
    const late = coordinationOn(url);
    const remaining = await new Promise<number>((done) => late.subscribe('rate-limited', 'anthropic', (signal) => done(signal.delay_ms)));
    expect(remaining).toBeGreaterThan(15_000);
    expect(remaining).toBeLessThanOrEqual(20_000);
  });
});

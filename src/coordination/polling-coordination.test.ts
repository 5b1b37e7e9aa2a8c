import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';
import { approvalFixture } from '../store/store-approvals.case.ts';
import { eventFixture, runFixture, sessionFixture } from '../store/store-fixtures.ts';
import type { Coordination, CoordinationSignal } from './coordination.ts';
import { createPollingCoordination } from './polling-coordination.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const each of open.splice(0).reverse()) await each.close();
});
const folder = mkdtempSync(join(tmpdir(), 'cadre-coordination-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Polls so rare that only the watch of the store's external version can find a signal in a test's time. */
const rarePolls = {
  'stop-requested': 600_000,
  'session-stop-requested': 600_000,
  'approval-answered': 600_000,
  'run-ended': 600_000,
  'notification-pending': 600_000,
};

/** Resolves with `promise`, or rejects once `ms` passed. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Nothing arrived within ${ms} ms.`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A store whose external version and stop-request reads the test controls. */
function controlledStore() {
  const reads: Array<(runs: Array<{ id: string }>) => void> = [];
  const state = { version: 1, versionReads: 0, reads };
  const store = {
    externalVersion() {
      state.versionReads++;
      return state.version;
    },
    listRuns: () => new Promise<Array<{ id: string }>>((resolve) => reads.push(resolve)),
  } as unknown as Store;
  return { store, state };
}

function coordinationOn(store: Store): Coordination {
  const coordination = createPollingCoordination({
    store,
    pollMs: { 'stop-requested': 10, 'session-stop-requested': 10, 'approval-answered': 10, 'run-ended': 10, 'notification-pending': 10 },
  });
  open.push(coordination);
  return coordination;
}

function next<T extends CoordinationSignal['type']>(coordination: Coordination, type: T, key: string): Promise<Extract<CoordinationSignal, { type: T }>> {
  return new Promise((resolve) => {
    const off = coordination.subscribe(type, key, (signal) => {
      off();
      resolve(signal);
    });
  });
}

describe('createPollingCoordination', () => {
  it('delivers a signal published in this process to its listeners of that kind and key only, at once', () => {
    const store = createSqliteStore({ path: ':memory:' });
    open.push(store);
    const coordination = coordinationOn(store);
    const heard: string[] = [];
    coordination.subscribe('run-ended', 'run_1', (signal) => heard.push(`1 ${signal.status}`));
    const off = coordination.subscribe('run-ended', 'run_2', (signal) => heard.push(`2 ${signal.status}`));
    coordination.subscribe('approval-answered', 'run_1', () => heard.push('wrong kind'));
    off();
    coordination.publish({ type: 'run-ended', run_id: 'run_1', parent_session_id: 'ses_1', status: 'completed' });
    coordination.publish({ type: 'run-ended', run_id: 'run_2', parent_session_id: 'ses_1', status: 'failed' });
    expect(heard).toEqual(['1 completed']);
  });

  it('finds what another process wrote to the shared store: stop requests, answers, ends, session stops, pending notifications', async () => {
    const path = `/tmp/cadre-coordination-${process.pid}-${Date.now()}.db`;
    const writer = createSqliteStore({ path });
    const reader = createSqliteStore({ path });
    open.push(writer, reader);
    const coordination = coordinationOn(reader);
    await writer.createSession(sessionFixture());
    await writer.insertRun(runFixture({ status: 'running', lease_owner: 'host:1:me' }), eventFixture('run_1', 'run-start'));
    await writer.insertRun(
      runFixture({ id: 'run_2', mode: 'background', status: 'completed', notification: { delivered_at: null, suppressed: false } }),
      eventFixture('run_2', 'run-end'),
    );
    await writer.insertApproval(approvalFixture());
    await writer.flush();

    const stop = next(coordination, 'stop-requested', 'host:1:me');
    const answered = next(coordination, 'approval-answered', 'apr_1');
    const ended = next(coordination, 'run-ended', 'run_1');
    const sessionStop = next(coordination, 'session-stop-requested', 'ses_1');
    const pending = next(coordination, 'notification-pending', 'ses_1');
    expect(await pending).toEqual({ type: 'notification-pending', run_id: 'run_2', parent_session_id: 'ses_1' });

    await writer.updateRun('run_1', { stop_requested_at: '2025-01-01T00:00:09.000Z', stop_requested_by: 'parent', stop_reason: 'enough' });
    await writer.flush();
    expect(await stop).toEqual({ type: 'stop-requested', run_id: 'run_1', owner: 'host:1:me', cause: 'parent', reason: 'enough' });

    await writer.resolveApproval({ id: 'apr_1', status: 'approved', by: 'person', at: '2025-01-01T00:00:09.000Z' });
    await writer.updateSession('ses_1', { user_canceled_at: '2025-01-01T00:00:10.000Z' });
    await writer.transitionRun({ id: 'run_1', from: ['running'], to: 'canceled_by_parent', event: eventFixture('run_1', 'run-end') });
    await writer.flush();
    expect(await answered).toEqual({ type: 'approval-answered', approval_id: 'apr_1' });
    expect(await sessionStop).toEqual({ type: 'session-stop-requested', session_id: 'ses_1', at: '2025-01-01T00:00:10.000Z' });
    expect(await ended).toEqual({ type: 'run-ended', run_id: 'run_1', parent_session_id: 'ses_1', status: 'canceled_by_parent' });
  });

  it('finds a stop request another process wrote as soon as it commits, long before the next poll', async () => {
    const path = join(folder, 'watched.db');
    const store = createSqliteStore({ path });
    open.push(store);
    await store.createSession(sessionFixture());
    await store.insertRun(runFixture({ status: 'running', lease_owner: 'host:1:me' }), eventFixture('run_1', 'run-start'));
    await store.flush();
    const coordination = createPollingCoordination({ store, pollMs: rarePolls, watchMs: 10 });
    open.push(coordination);
    const stop = next(coordination, 'stop-requested', 'host:1:me');
    const storeModule = fileURLToPath(new URL('../store/sqlite/sqlite-store.ts', import.meta.url));
    const stopper = `
      const { createSqliteStore } = await import(${JSON.stringify(storeModule)});
      const store = createSqliteStore({ path: ${JSON.stringify(path)} });
      await store.updateRun('run_1', { stop_requested_at: '2025-01-01T00:00:09.000Z', stop_requested_by: 'user', stop_reason: 'from the other process' });
      await store.close();`;
    const child = spawn(process.execPath, ['--input-type=module', '--eval', stopper], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(await within(10_000, stop)).toEqual({
      type: 'stop-requested',
      run_id: 'run_1',
      owner: 'host:1:me',
      cause: 'user',
      reason: 'from the other process',
    });
    expect(await exited).toBe(0);
  });

  it('reads a kind again when another process commits while its read is under way, and stops watching once nobody listens', async () => {
    const { store, state } = controlledStore();
    const coordination = createPollingCoordination({ store, pollMs: rarePolls, watchMs: 5 });
    open.push(coordination);
    const heard: string[] = [];
    const off = coordination.subscribe('stop-requested', 'host:1:me', (signal) => heard.push(signal.run_id));
    state.version = 2;
    await expect.poll(() => state.reads.length).toBe(1);
    // Committed after the first read began: that read may have missed it.
    state.version = 3;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(state.reads).toHaveLength(1);
    state.reads[0]([]);
    await expect.poll(() => state.reads.length).toBe(2);
    state.reads[1]([{ id: 'run_9' }]);
    await expect.poll(() => heard).toEqual(['run_9']);
    // Nothing changed since: no read without a commit.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(state.reads).toHaveLength(2);
    off();
    const versionReads = state.versionReads;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(state.versionReads).toBe(versionReads);
  });

  it('keeps answering its last external version once closed', async () => {
    const path = join(folder, 'closed.db');
    const store = createSqliteStore({ path });
    const other = createSqliteStore({ path });
    open.push(other);
    const before = store.externalVersion!();
    await other.createSession(sessionFixture());
    await other.flush();
    const after = store.externalVersion!();
    expect(after).not.toBe(before);
    await store.close();
    expect(store.externalVersion!()).toBe(after);
  });
});

import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { runFixture } from '../store/store-fixtures.ts';
import { displayStatus, elapsedUntil, runOwnerGone, viewRun } from './run-owner.ts';

const now = '2025-01-01T00:10:00.000Z';
const past = '2025-01-01T00:05:00.000Z';
const future = '2025-01-01T00:10:15.000Z';
/** The pid of a process that has exited. */
const deadOwner = `${hostname()}:${spawnSync('true').pid}:tag`;
const liveOwner = `${hostname()}:${process.pid}:tag`;

describe('run owner', () => {
  it('says the owner of a running run is gone when its process is dead, even before its lease ends', () => {
    const run = runFixture({ status: 'running', lease_owner: deadOwner, lease_expires_at: future });
    expect(runOwnerGone(run, now)).toBe(true);
    expect(displayStatus(run, now)).toBe('running (owner gone)');
    expect(viewRun(run, now).owner_gone).toBe(true);
    // The stored record is left as it is.
    expect(run.status).toBe('running');
  });

  it('says so for an expired lease of another host, but not while that lease lasts', () => {
    expect(runOwnerGone(runFixture({ status: 'queued', lease_owner: 'elsewhere:123:tag', lease_expires_at: past }), now)).toBe(true);
    expect(runOwnerGone(runFixture({ status: 'running', lease_owner: 'elsewhere:123:tag', lease_expires_at: future }), now)).toBe(false);
  });

  it('never says so of a live owner, nor of a finished run', () => {
    expect(displayStatus(runFixture({ status: 'running', lease_owner: liveOwner, lease_expires_at: past }), now)).toBe('running');
    expect(displayStatus(runFixture({ status: 'running', lease_owner: liveOwner, lease_expires_at: future }), now)).toBe('running');
    expect(displayStatus(runFixture({ status: 'completed', lease_owner: null, lease_expires_at: null }), now)).toBe('completed');
  });

  it('stops the elapsed time of a run whose owner is gone at the end of its last lease', () => {
    expect(elapsedUntil(runFixture({ status: 'running', lease_owner: 'elsewhere:1:tag', lease_expires_at: past }), now)).toBe(past);
    expect(elapsedUntil(runFixture({ status: 'running', lease_owner: deadOwner, lease_expires_at: future }), now)).toBe(now);
    expect(elapsedUntil(runFixture({ status: 'running', lease_owner: liveOwner, lease_expires_at: past }), now)).toBe(now);
  });
});

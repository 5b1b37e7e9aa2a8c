import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEventRecord, RunRecord } from '../../src/store/records.ts';
import { createWorkspace, type Workspace } from '../helpers/cadre-cli.ts';
import { postgresReason, postgresUrl } from './service-urls.ts';

// A cluster of this test's own, so restarting it disturbs no other test.
const binaries = process.env.CADRE_TEST_PG_CTL ? join(process.env.CADRE_TEST_PG_CTL, '..') : '/usr/local/bin';
const available = postgresUrl !== undefined && existsSync(join(binaries, 'initdb'));
const asPostgres = (command: string, args: string[]) =>
  process.getuid?.() === 0 ? execFileSync('runuser', ['-u', 'nobody', '--', join(binaries, command), ...args], { stdio: 'ignore' }) : execFileSync(join(binaries, command), args, { stdio: 'ignore' });

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe.skipIf(!available)(`cadre on Postgres across a server restart${postgresReason}`, () => {
  let folder: string;
  let port: number;
  let workspace: Workspace;
  const pgCtl = (...args: string[]) => asPostgres('pg_ctl', ['-D', join(folder, 'data'), ...args]);

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'cadre-pg-restart-'));
    if (process.getuid?.() === 0) chownSync(folder, 65534, 65534);
    port = await freePort();
    asPostgres('initdb', ['-D', join(folder, 'data'), '-U', 'cadre', '--auth=trust', '-E', 'UTF8']);
    pgCtl('-l', join(folder, 'log'), '-w', '-o', `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1`, 'start');
    const previous = process.env.CADRE_E2E_POSTGRES_URL;
    process.env.CADRE_E2E_POSTGRES_URL = `postgres://cadre@127.0.0.1:${port}/postgres`;
    workspace = await createWorkspace();
    if (previous === undefined) delete process.env.CADRE_E2E_POSTGRES_URL;
    else process.env.CADRE_E2E_POSTGRES_URL = previous;
  }, 60_000);

  afterAll(async () => {
    await workspace?.close();
    try {
      pgCtl('-m', 'immediate', 'stop');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('keeps a background run going through a restart; a stop after it ends the run, loses no event and leaves nothing running', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, 'slow background']);
    const [, runId] = await first.waitForStderr(/\[(run_\w+) scout\] started/);
    const restartedAt = Date.now();
    pgCtl('-m', 'fast', '-w', 'restart', '-o', `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1`);
    expect(Date.now() - restartedAt).toBeLessThan(20_000);
    const stop = await workspace.run(['stop', runId, '--db', workspace.database]);
    expect(stop.stderr).toBe('');
    expect(stop.code).toBe(0);
    const result = await first.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/\[run_\w+ scout\] canceled_by_user/);
    const shown = await workspace.json<{ run: RunRecord; events: RunEventRecord[] }>(['show', runId]);
    expect(shown.run.status).toBe('canceled_by_user');
    const seqs = shown.events.map((event) => event.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    expect(shown.events.map((event) => event.type)).toEqual(expect.arrayContaining(['run-queued', 'run-start', 'run-end']));
    const active = await workspace.json<RunRecord[]>(['runs']);
    expect(active.filter((run) => run.status === 'queued' || run.status === 'running')).toEqual([]);
  });
});

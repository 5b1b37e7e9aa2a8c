import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEventRecord, RunRecord } from '../../src/store/records.ts';
import { createWorkspace, type Workspace } from '../helpers/cadre-cli.ts';
import { postgresReason, postgresUrl } from './service-urls.ts';
import { privatePostgresAvailable, startPrivatePostgres, type PrivatePostgres } from './private-postgres.ts';

describe.skipIf(postgresUrl === undefined || !privatePostgresAvailable)(`cadre on Postgres across a server restart${postgresReason}`, () => {
  let server: PrivatePostgres;
  let workspace: Workspace;

  beforeAll(async () => {
    server = await startPrivatePostgres('cadre-pg-restart-');
    const previous = process.env.CADRE_E2E_POSTGRES_URL;
    process.env.CADRE_E2E_POSTGRES_URL = server.url;
    workspace = await createWorkspace();
    if (previous === undefined) delete process.env.CADRE_E2E_POSTGRES_URL;
    else process.env.CADRE_E2E_POSTGRES_URL = previous;
  }, 60_000);

  afterAll(async () => {
    await workspace?.close();
    server?.stop();
  });

  it('keeps a background run going through a restart; a stop after it ends the run, loses no event and leaves nothing running', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, 'slow background']);
    const [, runId] = await first.waitForStderr(/\[(run_\w+) scout\] started/);
    const restartedAt = Date.now();
    server.restart();
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

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEventRecord, RunRecord } from '../../src/store/records.ts';
import type { Workspace } from '../helpers/cadre-cli.ts';
import { postgresUrl, redisReason, redisUrl } from './service-urls.ts';
import { privatePostgresAvailable, startPrivatePostgres, type PrivatePostgres } from './private-postgres.ts';
import { freePort, modelCallUnderWay, until, workersWorkspace } from './workers-fixtures.ts';

/**
 * A background run on a worker while the server under it restarts: it ends as it would have,
 * its parent is notified, the run's events have no gap, nothing is left running, the queue works
 * afterwards, and the errors said on the way are few.
 */
async function throughRestart(
  workspace: Workspace,
  restart: () => Promise<void> | void,
): Promise<{ restartMs: number; endedAfterMs: number; errorLines: number }> {
  const show = (runId: string) => workspace.json<{ run: RunRecord; events: RunEventRecord[] }>(['show', runId]);
  const from = workspace.server.requests.length;
  const host = workspace.start(['run', ...workspace.modelFlags, 'long background']);
  const [, runId] = await host.waitForStderr(/\[(run_\w+) scout\] started/);
  await modelCallUnderWay(workspace, { from, system: 'You are the scout', task: 'LONG TASK', turn: 1 });
  const restartedAt = Date.now();
  await restart();
  const restartMs = Date.now() - restartedAt;
  // Cleared once cadre run ends: fired later, it would run `cadre show` in a workspace already removed.
  let late: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    host.exited,
    new Promise<never>(
      (_, failed) =>
        (late = setTimeout(
          () =>
            void show(runId).then(
              (shown) =>
                failed(
                  new Error(
                    `cadre run did not end within 45 s of the restart; the run: ${JSON.stringify(shown.run)}; events: ${shown.events.map((event) => event.type).join(', ')}; cadre run said: ${host.output.stderr}; the workers said: ${workspace.workers.map((worker) => worker.output.stderr).join('\n---\n')}`,
                  ),
                ),
              failed,
            ),
          45_000,
        )),
    ),
  ]).finally(() => clearTimeout(late));
  const endedAfterMs = Date.now() - restartedAt;
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toBe('Started it in the background.\nNoted the notification.\n');
  const shown = await show(runId);
  expect(shown.run).toMatchObject({ status: 'completed', result: { text: 'The long task is done.' } });
  const seqs = shown.events.map((event) => event.seq);
  expect(seqs).toEqual(seqs.map((_, index) => index + 1));
  expect(shown.events.map((event) => event.type)).toEqual(expect.arrayContaining(['run-queued', 'run-start', 'tool-call-end', 'run-end']));
  // The queue carries runs again.
  const after = await workspace.run(['run', ...workspace.modelFlags, 'delegate please']);
  expect(after.code, after.stderr).toBe(0);
  expect(after.stdout).toBe('Final answer after the scout.\n');
  const runs = await workspace.json<RunRecord[]>(['runs']);
  expect(runs.filter((run) => run.status === 'queued' || run.status === 'running')).toEqual([]);
  const stderr = [result.stderr, after.stderr, ...workspace.workers.map((worker) => worker.output.stderr)].join('\n');
  const errorLines = stderr.split('\n').filter((line) => /error/i.test(line)).length;
  expect(errorLines).toBeLessThan(40);
  return { restartMs, endedAfterMs, errorLines };
}

describe.skipIf(!redisUrl || !postgresUrl)(`workers across a restart of Redis${redisReason}`, () => {
  let folder: string;
  let port: number;
  let redis: ChildProcess;
  let workspace: Workspace;
  const startRedis = async () => {
    // Persistent, as BullMQ asks of its Redis: jobs survive a restart.
    redis = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', folder, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
      { stdio: 'ignore' },
    );
    await until(async () => (await fetchPing(port)) || undefined, 10_000, 'redis to start');
  };

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'cadre-redis-restart-'));
    port = await freePort();
    await startRedis();
    workspace = await workersWorkspace({ queue: `redis://127.0.0.1:${port}` });
  }, 90_000);

  afterAll(async () => {
    await workspace?.close();
    redis?.kill('SIGKILL');
    rmSync(folder, { recursive: true, force: true });
  });

  // Away longer than a job lock (10 s), BullMQ takes the job for stalled when Redis is back; the
  // worker that still holds the run's lease carries it to its end, and no other worker starts it.
  it.each([
    ['at once', 0],
    ['after 12 s, longer than a job lock', 12_000],
  ])(
    'finishes a run on a worker through a Redis restart (back %s); its parent is notified and no event is lost',
    async (_when, downMs) => {
      const outcome = await throughRestart(workspace, async () => {
        const exited = new Promise((done) => redis.once('exit', done));
        redis.kill('SIGTERM');
        await exited;
        await new Promise((done) => setTimeout(done, downMs));
        await startRedis();
      });
      console.log(
        `Redis restart (down ${downMs} ms) under a running run: restart ${outcome.restartMs} ms, run and parent done ${outcome.endedAfterMs} ms after it began, ${outcome.errorLines} error lines on stderr`,
      );
    },
    90_000,
  );
});

describe.skipIf(!redisUrl || !postgresUrl || !privatePostgresAvailable)(`workers across a restart of Postgres${redisReason}`, () => {
  let server: PrivatePostgres;
  let workspace: Workspace;

  beforeAll(async () => {
    server = await startPrivatePostgres('cadre-pg-workers-');
    workspace = await workersWorkspace({ database: server.url });
  }, 90_000);

  afterAll(async () => {
    await workspace?.close();
    server?.stop();
  });

  it('finishes a run on a worker through a Postgres restart; its parent is notified and no event is lost', async () => {
    const outcome = await throughRestart(workspace, () => server.restart());
    console.log(
      `Postgres restart under a running run: restart ${outcome.restartMs} ms, run and parent done ${outcome.endedAfterMs} ms after it began, ${outcome.errorLines} error lines on stderr`,
    );
  }, 90_000);
});

/** Whether a Redis server answers PING on the port. */
async function fetchPing(port: number): Promise<boolean> {
  const { createConnection } = await import('node:net');
  return new Promise((done) => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      done(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => done(false));
  });
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEventRecord, RunRecord } from '../../src/store/records.ts';
import type { CadreProcess, Workspace } from '../helpers/cadre-cli.ts';
import { postgresUrl, redisReason, redisUrl } from './service-urls.ts';
import { pidOf, until, workersWorkspace } from './workers-fixtures.ts';

describe.skipIf(!redisUrl || !postgresUrl)(`a run whose cadre worker processes keep dying${redisReason}`, () => {
  let workspace: Workspace;
  const show = (runId: string) => workspace.json<{ run: RunRecord; events: RunEventRecord[] }>(['show', runId]);

  beforeAll(async () => {
    workspace = await workersWorkspace();
  }, 90_000);
  afterAll(() => workspace?.close());

  /** One more `cadre worker` in the workspace, as the workspace's own two were started. */
  async function startWorker(): Promise<CadreProcess> {
    const worker = workspace.start([
      'worker',
      '--db',
      workspace.database,
      '--model',
      'openai-compatible:scripted',
      '--base-url',
      workspace.server.baseURL,
      '--concurrency',
      '8',
    ]);
    workspace.workers.push(worker);
    await worker.waitForStderr(/carrying out runs/, 30_000);
    return worker;
  }

  it('ends the run abandoned once the workers carrying it were killed with SIGKILL three times; the parent is notified and nothing is lost', async () => {
    const host = workspace.start(['run', ...workspace.modelFlags, 'slow background']);
    const [, runId] = await host.waitForStderr(/\[(run_\w+) scout\] started/);
    const killed: number[] = [];
    const timings: number[] = [];
    let killedAt = Date.now();
    for (let kill = 1; kill <= 3; kill++) {
      // Each time, the worker that took the run (its 30 s model call under way) dies, and a fresh
      // worker comes, so that two are always there to notice the stalled job and take it.
      const holder = await until(
        async () => {
          const pid = pidOf((await show(runId)).run.lease_owner);
          return workspace.workers.find((worker) => worker.child.pid === pid && !killed.includes(pid!));
        },
        45_000,
        `a living worker to hold the run before kill ${kill}`,
      );
      if (kill > 1) timings.push(Date.now() - killedAt);
      killedAt = Date.now();
      killed.push(holder.child.pid!);
      holder.child.kill('SIGKILL');
      await startWorker();
    }
    const shown = await until(
      async () => {
        const current = await show(runId);
        return current.run.status === 'abandoned' ? current : undefined;
      },
      45_000,
      'the run to end abandoned',
    );
    timings.push(Date.now() - killedAt);
    console.log(
      `a run whose workers died three times: taken again after ${timings.slice(0, 2).join(' and ')} ms, abandoned ${timings[2]} ms after the third kill`,
    );
    // The parent hears of it and answers: the host's turn on the notification ends the command.
    const result = await host.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Started it in the background.\nNoted the notification.\n');
    const { run, events } = await show(runId);
    expect(run.status).toBe('abandoned');
    expect(run.notification?.delivered_at).not.toBeNull();
    expect(shown.run.ended_at).not.toBeNull();
    // Nothing lost: the events have no gap and end with the run's one end and its notification.
    const seqs = events.map((event) => event.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    expect(events.filter((event) => event.type === 'run-end')).toHaveLength(1);
    expect(events.slice(-2).map((event) => event.type)).toEqual(['run-end', 'notification-deliver']);
    const runs = await workspace.json<RunRecord[]>(['runs']);
    expect(runs.filter((each) => each.status === 'queued' || each.status === 'running')).toEqual([]);
    // The workers that are left carry runs as before.
    const after = await workspace.run(['run', ...workspace.modelFlags, 'delegate please']);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toBe('Final answer after the scout.\n');
  }, 180_000);
});

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalRecord, RunEventRecord, RunRecord } from '../../src/store/records.ts';
import { cadreBin, type CadreProcess, type Workspace } from '../helpers/cadre-cli.ts';
import { postgresUrl, redisReason, redisUrl } from './service-urls.ts';
import { modelCallUnderWay, pidOf, until, workersWorkspace, writerAgent } from './workers-fixtures.ts';
import { createCadre, type Cadre } from '../../src/runtime/create-cadre.ts';
import { createRedisCoordination } from '../../src/coordination/redis-coordination.ts';
import type { Coordination } from '../../src/coordination/coordination.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { loadAgents } from '../../src/agents/load-agents.ts';
import { createWorkspaceTools } from '../../src/tools/workspace-tools.ts';

describe.skipIf(!redisUrl || !postgresUrl)(`runs carried out by cadre worker processes${redisReason}`, () => {
  let workspace: Workspace;
  const show = (runId: string) => workspace.json<{ run: RunRecord; events: RunEventRecord[] }>(['show', runId]);

  beforeAll(async () => {
    workspace = await workersWorkspace();
    await writeFile(join(workspace.cwd, '.cadre', 'agents', 'writer.md'), writerAgent);
  }, 90_000);
  afterAll(() => workspace?.close());

  it("stops a run on a worker within 2 s of a person's stop from a third process, each time", async () => {
    const latencies: Array<{ command: number; signal: number }> = [];
    for (let round = 0; round < 3; round++) {
      const host = workspace.start(['run', ...workspace.modelFlags, 'slow background']);
      const [, runId] = await host.waitForStderr(/\[(run_\w+) scout\] started/);
      const workerPids = workspace.workers.map((worker) => worker.child.pid);
      await until(async () => (workerPids.includes(pidOf((await show(runId)).run.lease_owner) ?? -1) ? true : undefined), 15_000, 'a worker to hold the run');
      const stoppedAt = Date.now();
      const stop = await workspace.run(['stop', runId, '--db', workspace.database]);
      const command = Date.now() - stoppedAt;
      expect(stop.code, stop.stderr).toBe(0);
      expect(stop.stdout).toContain(`${runId}  scout  canceled_by_user`);
      const { run } = await show(runId);
      expect(run.status).toBe('canceled_by_user');
      latencies.push({ command, signal: Date.parse(run.ended_at!) - Date.parse(run.stop_requested_at!) });
      expect(Date.parse(run.ended_at!) - stoppedAt).toBeLessThan(2_000);
      const result = await host.exited;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('Started it in the background.\nNoted the notification.\n');
    }
    console.log(
      `stop across workers: stop request to run end ${latencies.map((latency) => latency.signal).join(', ')} ms; whole cadre stop command ${latencies.map((latency) => latency.command).join(', ')} ms`,
    );
  }, 90_000);

  it('takes an answer to an ask raised on a worker from cadre approve in another process', async () => {
    const host = workspace.start(['run', ...workspace.modelFlags, '--approvals', 'wait', 'write please']);
    const ask = await until(async () => (await workspace.json<ApprovalRecord[]>(['approvals']))[0], 20_000, 'the ask');
    expect(ask).toMatchObject({ tool: 'write_file', status: 'pending' });
    const { run } = await show(ask.run_id!);
    expect(workspace.workers.map((worker) => worker.child.pid)).toContain(pidOf(run.lease_owner));
    const approve = await workspace.run(['approve', ask.id, '--db', workspace.database]);
    expect(approve.code, approve.stderr).toBe(0);
    const result = await host.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('The writer is done.\n');
    expect(await readFile(join(workspace.cwd, 'out.txt'), 'utf8')).toBe('written on a worker');
    expect((await show(ask.run_id!)).run.status).toBe('completed');
  }, 60_000);

  it('resumes the run of a worker killed with SIGKILL mid-run on the other worker; the parent is notified, no event lost, nothing left running', async () => {
    const from = workspace.server.requests.length;
    const host = workspace.start(['run', ...workspace.modelFlags, 'long background']);
    const [, runId] = await host.waitForStderr(/\[(run_\w+) scout\] started/);
    // Its second model call (after the stored first step) is under way when the worker dies.
    await modelCallUnderWay(workspace, { from, system: 'You are the scout', task: 'LONG TASK', turn: 1 });
    const { run } = await show(runId);
    const victim = workspace.workers.find((worker) => worker.child.pid === pidOf(run.lease_owner));
    expect(victim, `lease owner ${run.lease_owner}`).toBeDefined();
    const killedAt = Date.now();
    victim!.child.kill('SIGKILL');
    const survivor = workspace.workers.find((worker) => worker !== victim)!;
    await until(async () => (pidOf((await show(runId)).run.lease_owner) === survivor.child.pid ? true : undefined), 40_000, 'the other worker to take the run');
    const resumedAfter = Date.now() - killedAt;
    const result = await host.exited;
    const endedAfter = Date.now() - killedAt;
    console.log(`SIGKILL of a worker mid-run: resumed on the other worker after ${resumedAfter} ms, ended after ${endedAfter} ms`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Started it in the background.\nNoted the notification.\n');
    const shown = await show(runId);
    expect(shown.run).toMatchObject({ status: 'completed', result: { text: 'The long task is done.' } });
    const seqs = shown.events.map((event) => event.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    expect(shown.events.filter((event) => event.type === 'run-end')).toHaveLength(1);
    expect(shown.events.filter((event) => event.type === 'tool-call-end')).toHaveLength(1);
    const active = await workspace.json<RunRecord[]>(['runs']);
    expect(active.filter((each) => each.status === 'queued' || each.status === 'running')).toEqual([]);
  }, 90_000);
});

describe.skipIf(!redisUrl || !postgresUrl)(`a run whose workspace no worker has${redisReason}`, () => {
  let workspace: Workspace;
  let elsewhere: string;
  let stranger: CadreProcess | undefined;

  beforeAll(async () => {
    workspace = await workersWorkspace();
    // The workspace's own workers go; one worker of another folder is all that is left.
    for (const worker of workspace.workers) worker.child.kill('SIGTERM');
    await Promise.all(workspace.workers.map((worker) => worker.exited));
    const queue = workspace.env.CADRE_QUEUE!;
    elsewhere = await mkdtemp(join(tmpdir(), 'cadre-elsewhere-'));
    const child = spawn(
      process.execPath,
      [cadreBin, 'worker', '--queue', queue, '--db', workspace.database, '--model', 'openai-compatible:scripted', '--base-url', workspace.server.baseURL],
      {
        cwd: elsewhere,
        env: workspace.env,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    await new Promise<void>((ready, failed) => {
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        if (stderr.includes('carrying out runs')) ready();
      });
      child.on('exit', () => failed(new Error(`the worker exited: ${stderr}`)));
    });
    stranger = {
      child,
      output: { stdout: '', stderr },
      exited: new Promise((done) => child.on('close', (code, signal) => done({ code, signal, stdout: '', stderr }))),
      waitForStderr: () => Promise.reject(new Error('not kept')),
    };
  }, 90_000);

  afterAll(async () => {
    stranger?.child.kill('SIGTERM');
    await stranger?.exited;
    await workspace?.close();
    await rm(elsewhere, { recursive: true, force: true });
  });

  it('ends the run failed, saying no worker has its workspace, and the parent goes on', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, 'delegate please']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Final answer after the scout.\n');
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
    const [run] = await workspace.json<RunRecord[]>(['runs', sessionId]);
    expect(run.status).toBe('failed');
    expect(run.error?.message).toContain(`No cadre worker has the workspace ${workspace.cwd}`);
  }, 60_000);
});

describe.skipIf(!redisUrl || !postgresUrl)(`a host with a person to ask, its run on a worker${redisReason}`, () => {
  let workspace: Workspace;
  let host: Cadre;
  let coordination: Coordination;
  let store: Store;

  beforeAll(async () => {
    workspace = await workersWorkspace();
    await writeFile(join(workspace.cwd, '.cadre', 'agents', 'writer.md'), writerAgent);
    const queue = workspace.env.CADRE_QUEUE!;
    store = await openStore(workspace.database);
    coordination = createRedisCoordination({ url: queue, store });
    host = createCadre({
      store,
      coordination,
      queue,
      workspace: workspace.cwd,
      model: 'openai-compatible:scripted',
      baseURL: workspace.server.baseURL,
      env: {},
      agents: await loadAgents({ cwd: workspace.cwd, home: workspace.cwd, env: {} }),
      tools: createWorkspaceTools({ root: workspace.cwd }),
      approvals: 'ask',
      approver: async (approval) => {
        asked.push(approval);
        return { decision: 'approve' };
      },
    });
  }, 90_000);
  const asked: ApprovalRecord[] = [];

  afterAll(async () => {
    await host?.close();
    await coordination?.close();
    await store?.close();
    await workspace?.close();
  });

  it("shows an ask raised on a worker to the host's approver, whose answer lets the run go on there", async () => {
    const session = await host.createSession();
    const turn = await host.send(session.id, 'write please');
    await host.waitForIdle(session.id);
    expect(turn.text).toBe('The writer is done.');
    expect(asked.map((approval) => approval.tool)).toEqual(['write_file']);
    expect(await readFile(join(workspace.cwd, 'out.txt'), 'utf8')).toBe('written on a worker');
    const [approval] = await store.listApprovals({ session_id: session.id });
    expect(approval).toMatchObject({ status: 'approved', resolved_by: 'person' });
    // Asked and answered once each, in the run's events (the worker records both).
    const events = await store.listRunEvents(approval.run_id!);
    expect(events.filter((event) => event.type === 'approval-request')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'approval-resolve')).toHaveLength(1);
  }, 60_000);
});

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CadreEvent } from '../../src/runs/run-bus.ts';
import type { RunRecord } from '../../src/store/records.ts';
import type { Workspace } from '../helpers/cadre-cli.ts';
import { postgresUrl, redisReason, redisUrl } from './service-urls.ts';
import { pidOf, workersWorkspace } from './workers-fixtures.ts';

const leadAgent = `---
description: Leads a survey by sending the scout.
tools: [list_files]
mode: subagent
---
You are the lead. Send the scout, then report what it found.
`;

/** `cadre run --json PROMPT`: its events, and the pids that held each run's lease while it ran, as its live events said. */
async function runJson(workspace: Workspace, prompt: string) {
  const result = await workspace.run(['run', ...workspace.modelFlags, '--json', prompt]);
  expect(result.code, result.stderr).toBe(0);
  const lines = result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as CadreEvent | { type: 'session-end'; session_id: string; text: string });
  const holders = new Map<string, Set<number>>();
  for (const line of lines) {
    if (line.type !== 'run-event' || line.run.lease_owner === null) continue;
    const pids = holders.get(line.run.id) ?? new Set<number>();
    pids.add(pidOf(line.run.lease_owner)!);
    holders.set(line.run.id, pids);
  }
  const end = lines.at(-1);
  return { lines, holders, sessionId: end?.type === 'session-end' ? end.session_id : undefined };
}

describe.skipIf(!redisUrl || !postgresUrl)(`agents of runs on cadre worker processes${redisReason}`, () => {
  let workspace: Workspace;
  let workerPids: number[];

  beforeAll(async () => {
    workspace = await workersWorkspace();
    // Subagents may start subagents here: workers read that when they start, so two fresh ones come.
    const configFile = join(workspace.cwd, 'cadre.config.json');
    const config = JSON.parse(await readFile(configFile, 'utf8')) as { limits: Record<string, number> };
    await writeFile(configFile, JSON.stringify({ ...config, limits: { ...config.limits, maxDepth: 2 } }));
    // A deeper limit widens what runs: it applies once a person trusted the workspace's file.
    expect((await workspace.run(['trust'])).code).toBe(0);
    for (const worker of workspace.workers.splice(0)) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    for (let index = 0; index < 2; index++) {
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
    }
    workerPids = workspace.workers.map((worker) => worker.child.pid!);
  }, 120_000);
  afterAll(() => workspace?.close());

  it('carries out a run started by a run on a worker on that same worker, and notifies the parent when the outer run ends', async () => {
    // The lead's file is new to the workers that are already running.
    await writeFile(join(workspace.cwd, '.cadre', 'agents', 'lead.md'), leadAgent);
    const { lines, holders, sessionId } = await runJson(workspace, 'nest background');
    expect(lines.at(-1)).toMatchObject({ type: 'session-end', text: 'Noted the notification.' });
    const runs = await workspace.json<RunRecord[]>(['runs', sessionId!]);
    const lead = runs.find((run) => run.agent === 'lead')!;
    expect(lead).toMatchObject({ status: 'completed', depth: 1, result: { text: 'The lead heard from the scout.' } });
    expect(lead.notification?.delivered_at).not.toBeNull();
    const [scout] = await workspace.json<RunRecord[]>(['runs', lead.child_session_id]);
    expect(scout).toMatchObject({
      agent: 'scout',
      parent_run_id: lead.id,
      depth: 2,
      status: 'completed',
      result: { text: 'The workspace holds notes.txt and src/app.ts.' },
    });
    // Both on one worker, the nested run's events shown live by the host as a local run's.
    // (The host holds a run's lease until a worker takes it.)
    const onWorkers = [...(holders.get(lead.id) ?? [])].filter((pid) => workerPids.includes(pid));
    expect(onWorkers).toHaveLength(1);
    expect([...(holders.get(scout.id) ?? [])]).toEqual(onWorkers);
    const scoutEvents = lines.flatMap((line) => (line.type === 'run-event' && line.run.id === scout.id ? [line.event.type] : []));
    expect(scoutEvents).toEqual(expect.arrayContaining(['run-queued', 'run-start', 'tool-call-start', 'tool-call-end', 'run-end']));
  }, 60_000);

  it('uses an agent file as it is when a run starts, edited while the workers run', async () => {
    const before = await runJson(workspace, 'delegate please');
    const [first] = await workspace.json<RunRecord[]>(['runs', before.sessionId!]);
    expect(first.result?.text).toBe('The workspace holds notes.txt and src/app.ts.');
    const scoutFile = join(workspace.cwd, '.cadre', 'agents', 'scout.md');
    await writeFile(scoutFile, (await readFile(scoutFile, 'utf8')).replace('then report.', 'then report in one line, as the edited scout.'));
    const after = await runJson(workspace, 'delegate please');
    const [second] = await workspace.json<RunRecord[]>(['runs', after.sessionId!]);
    expect(second.result?.text).toBe('The edited scout reports.');
    // The same worker processes, not restarted.
    expect([...(after.holders.get(second.id) ?? [])].filter((pid) => workerPids.includes(pid))).toHaveLength(1);
    expect(workspace.workers.every((worker) => worker.child.exitCode === null)).toBe(true);
  }, 60_000);
});

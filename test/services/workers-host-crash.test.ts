import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import type { RunRecord } from '../../src/store/records.ts';
import type { Store } from '../../src/store/store.ts';
import type { ScriptedRequest, ScriptedTurn } from '../../src/testing/index.ts';
import { announcedRuns, checkChaos } from '../helpers/chaos-checks.ts';
import type { CadreProcess, Workspace } from '../helpers/cadre-cli.ts';
import { postgresUrl, redisReason, redisUrl } from './service-urls.ts';
import { pidOf, until, workersWorkspace } from './workers-fixtures.ts';

/**
 * The host (`cadre run`) is killed with SIGKILL while its runs work on `cadre worker`s, at several
 * points, sometimes with the worker of a run killed too, and restarted the way a person would
 * (`cadre run --session ID ...`). Every background run, and every foreground run whose waiting
 * call recovery answered while it still ran, is announced to the parent exactly once, and nothing
 * is left running or owed.
 */

/** The scripted model: the prompt of a step says which runs the lead starts and how long each takes. */
function respond(request: ScriptedRequest): ScriptedTurn {
  const firstUser = request.messages.find((message) => message.role === 'user')?.content ?? '';
  if (request.system.includes('You are the scout')) {
    return { text: `Report on ${firstUser}`, delay_ms: Number(/delay=(\d+)/.exec(firstUser)?.[1] ?? 0) };
  }
  const lastUser = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
  if (lastUser.startsWith('<subagent-notification>')) return { text: 'Noted.' };
  const plan = /^plan (\w+): bg (\d+|none); fg (\d+|none)$/.exec(lastUser);
  if (!plan || request.turn > 0) return { text: plan ? `Plan ${plan[1]} done.` : 'All quiet.' };
  const [, name, bg, fg] = plan;
  const calls = [];
  if (bg !== 'none')
    calls.push({ name: 'agent', arguments: { agent: 'scout', task: `${name}-bg delay=${bg}`, description: `${name} bg`, run_in_background: true } });
  if (fg !== 'none') calls.push({ name: 'agent', arguments: { agent: 'scout', task: `${name}-fg delay=${fg}`, description: `${name} fg` } });
  return { tool_calls: calls };
}

describe.skipIf(!redisUrl || !postgresUrl)(`a host killed while its runs work on workers${redisReason}`, () => {
  let workspace: Workspace;
  let store: Store;

  beforeAll(async () => {
    workspace = await workersWorkspace({ script: respond });
    store = await openStore(workspace.database);
  }, 90_000);
  afterAll(async () => {
    await store?.close();
    await workspace?.close();
  });

  /** One more `cadre worker` in the workspace, as its first two were started. */
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

  async function runOf(sessionId: string, description: string): Promise<RunRecord | undefined> {
    return (await store.listRuns({ parent_session_id: sessionId })).find((run) => run.description === description);
  }

  /** The session's runs once `description` is in one of `statuses` (on a worker, when running). */
  async function whenRun(sessionId: string, description: string, statuses: RunRecord['status'][]): Promise<RunRecord> {
    return until(
      async () => {
        const run = await runOf(sessionId, description);
        if (!run || !statuses.includes(run.status)) return undefined;
        if (run.status === 'running' && !workspace.workers.some((worker) => worker.child.pid === pidOf(run.lease_owner))) return undefined;
        return run;
      },
      30_000,
      `run '${description}' to be ${statuses.join(' or ')}`,
    );
  }

  /**
   * Starts the lead on `plan`, waits for the moment `killAt` says, kills the host (and, with
   * `killWorkerOf`, the worker carrying that run, replaced by a fresh one), restarts it with
   * `cadre run --session`, and checks what the parent was told.
   */
  async function crashAndRecover(
    name: string,
    plan: { bg: number | null; fg: number | null },
    killAt: (sessionId: string) => Promise<void>,
    killWorkerOf?: string,
  ) {
    const host = workspace.start(['run', ...workspace.modelFlags, `plan ${name}: bg ${plan.bg ?? 'none'}; fg ${plan.fg ?? 'none'}`]);
    const [, runId] = await host.waitForStderr(/\[(run_\w+) scout\] started/, 30_000);
    const sessionId = (await store.getRun(runId))!.parent_session_id;
    await killAt(sessionId);
    host.child.kill('SIGKILL');
    await host.exited;
    if (killWorkerOf) {
      const run = (await runOf(sessionId, killWorkerOf))!;
      const worker = workspace.workers.find((each) => each.child.pid === pidOf(run.lease_owner));
      // Under heavy load the run may have ended in the meantime: then there is no worker of it to kill.
      if (!worker) console.log(`workers-host-crash: ${killWorkerOf} was ${run.status} before its worker could be killed`);
      if (worker) {
        worker.child.kill('SIGKILL');
        await worker.exited;
        workspace.workers.splice(workspace.workers.indexOf(worker), 1);
        await startWorker();
      }
    }
    const recovered = await workspace.run(['run', ...workspace.modelFlags, '--session', sessionId, `check ${name}`]);
    expect(recovered.code, recovered.stderr).toBe(0);
    await store.flush();
    const report = await checkChaos(store, sessionId);
    expect(report.violations).toEqual([]);
    const counts = new Map<string, number>();
    for (const message of await store.listMessages(sessionId)) for (const id of announcedRuns(message)) counts.set(id, (counts.get(id) ?? 0) + 1);
    const runs = await store.listRuns({ parent_session_id: sessionId });
    const told = Object.fromEntries(runs.map((run) => [run.description, { status: run.status, mode: run.mode, announced: counts.get(run.id) ?? 0 }]));
    return {
      told,
      answers: await recoveryAnswers(sessionId, runs),
      pending: await store.listRuns({ parent_session_id: sessionId, notification_pending: true }),
    };
  }

  /** What recovery answered, per run description, for the calls the dead host left open: `running` or `ended`. */
  async function recoveryAnswers(sessionId: string, runs: RunRecord[]): Promise<Record<string, 'running' | 'ended'>> {
    const answers: Record<string, 'running' | 'ended'> = {};
    for (const message of await store.listMessages(sessionId)) {
      if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
      for (const part of message.content as Array<{ toolCallId: string; output: { value: string } }>) {
        const run = runs.find((each) => each.tool_call_id === part.toolCallId);
        if (!run || !part.output.value.startsWith('The process stopped')) continue;
        const said = part.output.value.slice(part.output.value.indexOf(run.id)).split(';')[0];
        answers[run.description] = / is (running|queued)/.test(said) ? 'running' : 'ended';
      }
    }
    return answers;
  }

  /**
   * A foreground run whose waiting call recovery answered while it still worked goes on promoted
   * and is announced once; one that had ended by then is told in the answer, and not announced.
   */
  function expectForeground(told: { mode: string; announced: number }, answer: 'running' | 'ended' | undefined) {
    expect(answer).toBeDefined();
    if (answer === 'running') expect(told).toMatchObject({ mode: 'background', announced: 1 });
    else expect(told).toMatchObject({ mode: 'foreground', announced: 0 });
  }

  it('announces once a background run that ended on a worker just before the host died, and the foreground run recovery found still running', async () => {
    const { told, answers, pending } = await crashAndRecover('a', { bg: 0, fg: 10_000 }, async (sessionId) => {
      await whenRun(sessionId, 'a bg', ['completed']);
      await whenRun(sessionId, 'a fg', ['running']);
    });
    expect(told['a bg']).toEqual({ status: 'completed', mode: 'background', announced: 1 });
    expectForeground(told['a fg'], answers['a fg']);
    expect(pending).toEqual([]);
  }, 120_000);

  it('announces once a background run that was working on a worker when the host died', async () => {
    const { told, pending } = await crashAndRecover('b', { bg: 5000, fg: null }, async (sessionId) => {
      await whenRun(sessionId, 'b bg', ['running']);
    });
    expect(told['b bg']).toEqual({ status: 'completed', mode: 'background', announced: 1 });
    expect(pending).toEqual([]);
  }, 120_000);

  it('announces once a foreground run that was working on a worker when the host died', async () => {
    const { told, answers, pending } = await crashAndRecover('c', { bg: null, fg: 10_000 }, async (sessionId) => {
      await whenRun(sessionId, 'c fg', ['running']);
    });
    expectForeground(told['c fg'], answers['c fg']);
    expect(pending).toEqual([]);
  }, 120_000);

  it('announces each run once when the worker of the foreground run dies with the host', async () => {
    const { told, answers, pending } = await crashAndRecover(
      'd',
      { bg: 0, fg: 10_000 },
      async (sessionId) => {
        await whenRun(sessionId, 'd bg', ['completed']);
        await whenRun(sessionId, 'd fg', ['running']);
      },
      'd fg',
    );
    expect(told['d bg']).toMatchObject({ mode: 'background', announced: 1 });
    // Its worker died: recovery takes it over (recovered, background) or finds it with another worker.
    expectForeground(told['d fg'], answers['d fg']);
    expect(['completed', 'abandoned']).toContain(told['d fg'].status);
    expect(pending).toEqual([]);
  }, 150_000);

  it('announces once a background run whose worker dies with the host', async () => {
    const { told, pending } = await crashAndRecover(
      'e',
      { bg: 5000, fg: null },
      async (sessionId) => {
        await whenRun(sessionId, 'e bg', ['running']);
      },
      'e bg',
    );
    expect(told['e bg']).toMatchObject({ mode: 'background', announced: 1 });
    expect(pending).toEqual([]);
  }, 150_000);
});

import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import { runFixture, sessionFixture } from '../src/store/store-fixtures.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';
import { startScriptedServer, type ScriptedServer, type ScriptedTurn } from '../src/testing/index.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace | undefined;
let server: ScriptedServer | undefined;
let blocker: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
  blocker = undefined;
  await server?.close();
  server = undefined;
  await workspace?.close();
  workspace = undefined;
});

/** The lease owner of a process that has exited, on this host. */
function deadOwner(): string {
  return `${hostname()}:${spawnSync('true').pid}:gone`;
}

/** A primary session with one run left `running` by a process that died, as a crash leaves it. */
async function orphanedRun(store: Store, overrides: Partial<RunRecord> = {}): Promise<RunRecord> {
  const sessionId = 'ses_01ORPHAN';
  if (!(await store.getSession(sessionId))) {
    await store.createSession(sessionFixture({ id: sessionId, model: 'openai-compatible:scripted', created_at: new Date().toISOString() }));
    await store.appendMessages([{ session_id: sessionId, role: 'user', content: 'Start the scout', created_at: new Date().toISOString() }]);
  }
  const startedAt = new Date(Date.now() - 60_000).toISOString();
  const run = runFixture({
    id: overrides.id ?? 'run_01ORPHAN',
    parent_session_id: sessionId,
    agent: 'scout',
    description: 'list the workspace',
    task: 'List the workspace',
    mode: 'background',
    status: 'running',
    created_at: startedAt,
    started_at: startedAt,
    lease_owner: deadOwner(),
    lease_expires_at: new Date(Date.now() - 30_000).toISOString(),
    ...overrides,
  });
  await store.createSession(
    sessionFixture({ id: run.child_session_id, agent: 'scout', model: 'openai-compatible:scripted', parent_run_id: run.id, created_at: startedAt }),
  );
  await store.appendMessages([{ session_id: run.child_session_id, role: 'user', content: run.task, created_at: startedAt }]);
  await store.insertRun(run, { run_id: run.id, at: startedAt, type: 'run-queued', data: { mode: run.mode } });
  await store.flush();
  return run;
}

describe('cadre serve', () => {
  it('exits 2 with a hint when its port is in use', async () => {
    workspace = await createWorkspace();
    blocker = createServer();
    const port = await new Promise<number>((resolve) => blocker!.listen(0, '127.0.0.1', () => resolve((blocker!.address() as { port: number }).port)));
    const result = await workspace.run(['serve', '--port', String(port), '--db', workspace.database]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([`cadre: port ${port} is in use on 127.0.0.1; pass --port N (or --port 0 for any free port).`]);
    expect(result.stdout).toBe('');
  });
});

describe('cadre runs and show on a run whose process died', () => {
  it('say that its owner is gone, stop its elapsed time, and leave the stored status to recovery', async () => {
    workspace = await createWorkspace();
    const store = createSqliteStore({ path: workspace.database });
    const run = await orphanedRun(store);
    await store.close();

    const listing = await workspace.run(['runs', run.parent_session_id, '--db', workspace.database]);
    expect(listing.code).toBe(0);
    const row = listing.stdout.split('\n').find((line) => line.startsWith(run.id))!;
    // Started a minute ago; its lease ended 30 s ago, where its elapsed time stops.
    expect(row).toMatch(/^run_01ORPHAN\s+running \(owner gone\)\s+scout\s+list the workspace\s+30s\s/);
    const [json] = await workspace.json<Array<RunRecord & { owner_gone: boolean }>>(['runs', run.parent_session_id]);
    expect(json).toMatchObject({ id: run.id, status: 'running', owner_gone: true });

    const shown = await workspace.run(['show', run.id, '--db', workspace.database]);
    expect(shown.stdout.split('\n')[0]).toBe(`${run.id}  scout  running (owner gone)`);
    expect(shown.stdout).toContain(`  owner:       ${run.lease_owner} is gone; cadre run --session ${run.parent_session_id} (or cadre serve) recovers the run`);
    const detail = await workspace.json<{ run: RunRecord & { owner_gone: boolean } }>(['show', run.id]);
    expect(detail.run.owner_gone).toBe(true);

    const after = createSqliteStore({ path: workspace.database });
    expect((await after.getRun(run.id))?.status).toBe('running');
    await after.close();
  });
});

describe('cadre run --session', () => {
  it('shows every run it recovers: the view listens before recovery starts', async () => {
    workspace = await createWorkspace();
    server = await startScriptedServer({
      script: (request): ScriptedTurn => {
        const last = request.messages.at(-1);
        if (request.system.includes('You are the scout')) return { text: 'Scout report: notes.txt and src/app.ts.' };
        if (last?.role === 'user' && last.content.includes('<subagent-notification>')) return { text: 'The scout reported back.' };
        return { text: 'Waiting for the scout.' };
      },
    });
    const store = createSqliteStore({ path: workspace.database });
    const running = await orphanedRun(store);
    const queued = await orphanedRun(store, { id: 'run_01ORPHAN2', status: 'queued', started_at: null, child_session_id: 'ses_child_2' });
    await store.close();

    const flags = ['--model', 'openai-compatible:scripted', '--base-url', server.baseURL, '--db', workspace.database];
    const result = await workspace.run(['run', ...flags, '--session', running.parent_session_id, '--json', 'How is the scout doing?']);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; run?: RunRecord; event?: { type: string; data: Record<string, unknown> } });
    for (const run of [running, queued]) {
      const events = lines.filter((line) => line.type === 'run-event' && line.run?.id === run.id).map((line) => line.event!);
      // The recovery's own event comes first: it was published after the view subscribed.
      expect(events[0]).toMatchObject({ type: 'warning', data: { kind: 'recovered' } });
      expect(events.find((event) => event.type === 'run-end')).toMatchObject({ data: { status: 'completed' } });
    }
  });

  it('prints which run it resumed in the plain view', async () => {
    workspace = await createWorkspace();
    server = await startScriptedServer({
      script: (request): ScriptedTurn => {
        if (request.system.includes('You are the scout')) return { text: 'Scout report.' };
        return { text: 'Noted.' };
      },
    });
    const store = createSqliteStore({ path: workspace.database });
    const run = await orphanedRun(store);
    await store.close();
    const flags = ['--model', 'openai-compatible:scripted', '--base-url', server.baseURL, '--db', workspace.database];
    const result = await workspace.run(['run', ...flags, '--session', run.parent_session_id, 'How is it going?']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`[${run.id} scout] resumed (its process had died): list the workspace`);
    expect(result.stderr).toMatch(new RegExp(`\\[${run.id} scout\\] completed \\([^)]+\\): Scout report\\.`));
  });
});

describe('token budgets from the command line', () => {
  it('ends a run past limits.maxTokensPerRun as budget_exceeded, and shows tokens against budgets in runs, show and export', async () => {
    workspace = await createWorkspace();
    await writeFile(join(workspace.cwd, 'cadre.config.json'), JSON.stringify({ limits: { maxTokensPerRun: 1000, maxTokensPerSession: 100_000 } }));
    server = await startScriptedServer({
      script: (request): ScriptedTurn => {
        const last = request.messages.at(-1);
        const usage = { input_tokens: 300, output_tokens: 100 };
        if (request.system.includes('You are the scout'))
          return { text: `Looked ${request.turn + 1} times.`, tool_calls: [{ name: 'list_files', arguments: { path: '.' } }], usage };
        if (request.turn === 0)
          return {
            tool_calls: [{ name: 'agent', arguments: { agent: 'scout', task: 'List everything', description: 'list everything' } }],
            usage: { input_tokens: 50, output_tokens: 10 },
          };
        if (last?.role === 'tool') return { text: 'The scout ran out of tokens.', usage: { input_tokens: 50, output_tokens: 10 } };
        return { text: 'ok' };
      },
    });
    const flags = ['--model', 'openai-compatible:scripted', '--base-url', server.baseURL, '--db', workspace.database];
    const result = await workspace.run(['run', ...flags, 'Survey']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/\[run_\w+ scout\] failed \(\d+s\): budget_exceeded: The run used 1200 tokens of its budget of 1000/);
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
    const [run] = await workspace.json<RunRecord[]>(['runs', sessionId]);
    expect(run).toMatchObject({ status: 'failed', error: { kind: 'budget_exceeded' }, turns: 3, partial_result: 'Looked 3 times.' });

    const listing = await workspace.run(['runs', sessionId, '--db', workspace.database]);
    expect(listing.stdout).toMatch(/\s900\/300 of 1000\s/);
    // The primary agent's two calls (60 tokens each) and the run's 1200.
    expect(listing.stdout).toContain('Session tokens: 1320 of a budget of 100000 (primary agent 120, runs 1200)');
    const shown = await workspace.run(['show', run.id, '--db', workspace.database]);
    expect(shown.stdout).toContain('  tokens:      900 in, 300 out (1200 of a budget of 1000, limits.maxTokensPerRun)');
    expect(shown.stdout).toContain('Error: budget_exceeded: The run used 1200 tokens of its budget of 1000 (limits.maxTokensPerRun).');
    const exported = await workspace.run(['export', sessionId, '--db', workspace.database]);
    const document = JSON.parse(exported.stdout) as { agent_usage: unknown; token_budgets: unknown; usage: unknown };
    expect(document).toMatchObject({
      usage: { input_tokens: 900, output_tokens: 300 },
      agent_usage: { input_tokens: 100, output_tokens: 20 },
      token_budgets: { max_tokens_per_run: 1000, max_tokens_per_session: 100_000 },
    });
  });
});

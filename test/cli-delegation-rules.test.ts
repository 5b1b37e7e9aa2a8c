import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalRecord, RunEventRecord, RunRecord } from '../src/store/records.ts';
import { openStore } from '../src/store/open-store.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';
import { eventually } from './helpers/eventually.ts';
import { scriptedWires, wireModelFlags, wireModels } from './helpers/wires.ts';
import type { ScriptedWire } from '../src/testing/index.ts';

let workspace: Workspace;
beforeAll(async () => {
  // With workers (scripts/test-e2e-workers.ts), they carry out the runs of sessions on every wire: they get the keys too.
  workspace = await createWorkspace({ workerEnv: { ...wireModels.messages.env, ...wireModels.responses.env } });
  // The scripted primary agent answers 'delegate please' by delegating to the scout.
  await writeFile(join(workspace.cwd, 'ask-agent.config.json'), JSON.stringify({ permissions: { ask: ['agent(scout)'] } }));
  await writeFile(join(workspace.cwd, 'deny-agent.config.json'), JSON.stringify({ permissions: { deny: ['Agent(sco*)'] } }));
});
afterAll(() => workspace.close());

/** `cadre run` on a wire: its flags and environment (the Messages wire takes its URL from CADRE_BASE_URL). */
function onWire(wire: ScriptedWire): { flags: string[]; env: Record<string, string> } {
  const url = workspace.server.baseURL;
  const { flags, env } = wireModelFlags(wire, url);
  return wire === 'messages'
    ? { flags: [...flags.slice(0, 2), '--db', workspace.database], env: { ...env, CADRE_BASE_URL: url } }
    : { flags: [...flags, '--db', workspace.database], env };
}

describe.each(scriptedWires)('an ask on a delegation, on the %s wire', (wire) => {
  it('keeps the run queued awaiting approval until cadre approve answers from another process, then runs it', async () => {
    const { flags, env } = onWire(wire);
    const first = workspace.start(['run', ...flags, '--config', 'ask-agent.config.json', '--approvals', 'wait', 'delegate please'], { env });
    const [, approvalId, runId] = await first.waitForStderr(/\[(apr_\w+)\] main asks to start agent scout \((run_\w+)\)/);

    const [held] = (await workspace.json<RunRecord[]>(['runs'])).filter((run) => run.id === runId);
    expect(held).toMatchObject({ agent: 'scout', status: 'queued', started_at: null, last_activity: 'awaiting approval: agent scout' });
    const listed = await workspace.json<ApprovalRecord[]>(['approvals']);
    expect(listed).toMatchObject([{ id: approvalId, run_id: runId, tool: 'agent', argument: 'scout', summary: 'agent scout', status: 'pending' }]);

    const approve = await workspace.run(['approve', approvalId, '--db', workspace.database]);
    expect(approve.code).toBe(0);
    expect(approve.stdout).toMatch(new RegExp(`^${approvalId} approved: agent scout\\n$`));
    const result = await first.exited;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Final answer');
    const shown = await workspace.json<{ run: RunRecord; events: RunEventRecord[] }>(['show', runId]);
    expect(shown.run.status).toBe('completed');
    const types = shown.events.map((event) => event.type);
    expect(types.indexOf('approval-request')).toBeGreaterThanOrEqual(0);
    expect(types.indexOf('approval-resolve')).toBeLessThan(types.indexOf('run-start'));
  });
});

describe('rules on delegation from the command line', () => {
  it('denies by a rule in the configuration: no run, and the model reads the rule as written', async () => {
    const before = workspace.server.requests.length;
    const result = await workspace.run(['run', ...workspace.modelFlags, '--config', 'deny-agent.config.json', 'delegate please']);
    expect(result.code).toBe(0);
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
    expect(await workspace.json<RunRecord[]>(['runs', sessionId])).toEqual([]);
    const toolMessages = workspace.server.requests
      .slice(before)
      .flatMap((request) => request.messages)
      .filter((message) => message.role === 'tool');
    expect(toolMessages.some((message) => message.content.includes("denied by the rule deny 'Agent(sco*)'"))).toBe(true);
  });

  it('denies an ask at once off a terminal (--approvals deny): the run ends failed / denied', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, '--config', 'ask-agent.config.json', '--approvals', 'deny', 'delegate please']);
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
    const [run] = await workspace.json<RunRecord[]>(['runs', sessionId]);
    expect(run).toMatchObject({ agent: 'scout', status: 'failed', started_at: null, error: { kind: 'denied' } });
    expect(run.error?.message).toContain('nobody could answer');
    expect(result.stderr).toMatch(/\[apr_\w+\] denied by no_approver: agent scout/);
  });

  it('ends a run awaiting its ask as any stop does, from cadre stop in another process, and closes the ask', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, '--config', 'ask-agent.config.json', '--approvals', 'wait', 'delegate please']);
    const [, approvalId, runId] = await first.waitForStderr(/\[(apr_\w+)\] main asks to start agent scout \((run_\w+)\)/);
    const stop = await workspace.run(['stop', runId, '--db', workspace.database]);
    expect(stop.code).toBe(0);
    expect((await first.exited).code).toBe(0);
    const shown = await workspace.json<{ run: RunRecord; events: RunEventRecord[] }>(['show', runId]);
    expect(shown.run).toMatchObject({ status: 'canceled_by_user', started_at: null });
    expect((await workspace.json<ApprovalRecord[]>(['approvals'])).map((each) => each.id)).not.toContain(approvalId);
    const store = await openStore(workspace.database);
    try {
      expect(await store.getApproval(approvalId)).toMatchObject({ status: 'canceled', resolved_by: 'stop' });
    } finally {
      await store.close();
    }
  });

  it('accepts --deny with an agent rule and refuses an agent rule with no name', async () => {
    const denied = await workspace.run(['run', ...workspace.modelFlags, '--deny', 'Task(scout)', 'delegate please']);
    const sessionId = denied.stderr.match(/Session (ses_\w+)/)![1];
    expect(await workspace.json<RunRecord[]>(['runs', sessionId])).toEqual([]);
    const bad = await workspace.run(['run', ...workspace.modelFlags, '--deny', 'agent(model:)', 'delegate please']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('names no model');
  });
});

describe('an ask on a delegation across a crash', () => {
  it('survives cadre run killed with SIGKILL: the next process holds the run again, and cadre approve starts it', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, '--config', 'ask-agent.config.json', '--approvals', 'wait', 'delegate please']);
    const [, approvalId, runId] = await first.waitForStderr(/\[(apr_\w+)\] main asks to start agent scout \((run_\w+)\)/);
    const store = await openStore(workspace.database);
    try {
      const held = (await store.getRun(runId))!;
      first.child.kill('SIGKILL');
      expect((await first.exited).signal).toBe('SIGKILL');

      const second = workspace.start([
        'run',
        ...workspace.modelFlags,
        '--config',
        'ask-agent.config.json',
        '--approvals',
        'wait',
        '--session',
        held.parent_session_id,
        // A prompt the scripted primary answers without delegating again.
        'second question',
      ]);
      // The next process takes the run over and holds it again: still queued, never started, the same ask pending.
      const taken = await eventually(
        async () => {
          const run = await store.getRun(runId);
          return run && run.lease_owner !== held.lease_owner && run.warnings.some((warning) => warning.kind === 'recovered') && run;
        },
        { timeout: 20_000, interval: 50, what: 'the run taken over' },
      );
      expect(taken).toMatchObject({ status: 'queued', started_at: null, last_activity: 'awaiting approval: agent scout' });
      expect(await store.getApproval(approvalId)).toMatchObject({ status: 'pending' });
      expect(await store.listApprovals({ run_id: runId })).toHaveLength(1);

      const approve = await workspace.run(['approve', approvalId, '--db', workspace.database]);
      expect(approve.code).toBe(0);
      const result = await second.exited;
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(`[${approvalId}] approved by person: agent scout`);
      const done = await store.getRun(runId);
      expect(done).toMatchObject({ status: 'completed' });
      expect(done?.started_at).not.toBeNull();
    } finally {
      await store.close();
    }
  });
});

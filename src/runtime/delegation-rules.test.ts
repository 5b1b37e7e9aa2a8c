import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../agents/agent-definition.ts';
import type { ApprovalMode } from '../approvals/approval-broker.ts';
import type { Limits } from '../config/limits.ts';
import type { PermissionsConfig } from '../permissions/permissions.ts';
import type { RunRecord } from '../store/records.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';
import { scriptedLanguageModel, type Script } from '../testing/index.ts';
import { createCadre, type Cadre } from './create-cadre.ts';
import { toolOutputs } from './runtime-fixtures.ts';
import { eventually } from '../../test/helpers/eventually.ts';

const folder = mkdtempSync(join(tmpdir(), 'cadre-delegation-rules-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

const writer = defineAgent({ name: 'writer', description: 'Writes notes', system: 'Writer agent.', tools: [] });
const helper = defineAgent({ name: 'helper', description: 'Helps', system: 'Helper agent.', tools: [] });
const reviewUi = defineAgent({ name: 'review-ui', description: 'Reviews UI', system: 'Reviewer agent.', tools: [], model: 'scripted:review-model' });

const subagentRules: Script = [
  { when: { system_includes: 'Writer agent' }, turns: [{ text: 'Wrote the note.' }] },
  { when: { system_includes: 'Helper agent' }, turns: [{ text: 'Helped.' }] },
  { when: { system_includes: 'Reviewer agent' }, turns: [{ text: 'Reviewed.' }] },
];

/** The primary agent makes one tool call when told to go, then says it is done; it only notes notifications. */
function mainCalls(tool: string, input: Record<string, unknown>): Script {
  return [
    ...subagentRules,
    { when: { last_user_includes: 'go' }, turns: [{ tool_calls: [{ name: tool, arguments: input }] }, { text: 'Done.' }] },
    { turns: [{ text: 'Noted.' }] },
  ];
}

interface Setup {
  script: Script;
  permissions?: PermissionsConfig;
  approvals?: ApprovalMode;
  limits?: Partial<Limits>;
  store?: Store;
  leaseMs?: number;
}

function makeCadre({ script, permissions, approvals = 'wait', limits, store, leaseMs }: Setup): Cadre {
  const model = scriptedLanguageModel(script);
  const cadre = createCadre({
    store: store ?? createSqliteStore({ path: ':memory:' }),
    model,
    modelAliases: {},
    agents: [writer, helper, reviewUi],
    tools: {},
    approvals,
    permissions,
    limits,
    leaseMs,
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return cadre;
}

async function until<T>(look: () => Promise<T | undefined | null | false>): Promise<T> {
  return (await eventually(look)) as T;
}

/** Asks waiting for an answer, once there is one. */
function pendingAsks(cadre: Cadre) {
  return until(async () => {
    const pending = await cadre.pendingApprovals();
    return pending.length > 0 && pending;
  });
}

async function runs(cadre: Cadre, sessionId: string): Promise<RunRecord[]> {
  return cadre.store.listRuns({ parent_session_id: sessionId, order: 'oldest' });
}

async function runOf(cadre: Cadre, sessionId: string, agent: string): Promise<RunRecord | undefined> {
  return (await runs(cadre, sessionId)).find((run) => run.agent === agent);
}

async function outputs(cadre: Cadre, sessionId: string, tool: string): Promise<string[]> {
  return toolOutputs(await cadre.store.listMessages(sessionId), tool);
}

describe('deny rules on delegation', () => {
  it('answers agent with a tool error quoting the rule as written, and makes no run', async () => {
    const cadre = makeCadre({ script: mainCalls('agent', { agent: 'writer', task: 'Write a note' }), permissions: { deny: ['Task(writ*)'] } });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const [output] = await outputs(cadre, session.id, 'agent');
    expect(output).toContain("is denied by the rule deny 'Task(writ*)'");
    expect(output).toContain('No run was started');
    expect(await runs(cadre, session.id)).toEqual([]);
  });

  it('matches agent(model:PATTERN) on the resolved model spec', async () => {
    const cadre = makeCadre({
      script: mainCalls('agent', { agent: 'review-ui', task: 'Review' }),
      permissions: { allow: ['agent(review-*)'], deny: ['agent(model:scripted:review-*)'] },
    });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const [output] = await outputs(cadre, session.id, 'agent');
    expect(output).toContain("agent 'review-ui' (model scripted:review-model) is denied by the rule deny 'agent(model:scripted:review-*)'");
    expect(await runs(cadre, session.id)).toEqual([]);
  });

  it("lets the delegating agent's front matter narrow: a deny there applies", async () => {
    const main = defineAgent({ name: 'main', description: 'Main', system: 'Main agent.', mode: 'primary', permissions: { deny: ['agent(helper)'] } });
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      model: scriptedLanguageModel(mainCalls('agent', { agent: 'helper', task: 'Help' })),
      agents: [main, helper],
      tools: {},
      approvals: 'wait',
      permissions: { allow: ['agent'] },
      maxRetries: 0,
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    expect((await outputs(cadre, session.id, 'agent'))[0]).toContain("denied by the rule deny 'agent(helper)'");
    expect(await runs(cadre, session.id)).toEqual([]);
  });

  it('applies to each agent_parallel task on its own: a denied task makes no run, its siblings run', async () => {
    const cadre = makeCadre({
      script: mainCalls('agent_parallel', {
        tasks: [
          { agent: 'writer', task: 'Write' },
          { agent: 'helper', task: 'Help' },
        ],
      }),
      permissions: { deny: ['agent(writer)'] },
    });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const [output] = await outputs(cadre, session.id, 'agent_parallel');
    const [first, second] = output.split('\n---\n');
    expect(first).toContain('agent: writer\nstatus: denied (no run was started)');
    expect(first).toContain("denied by the rule deny 'agent(writer)'");
    expect(second).toContain('status: completed');
    expect(second).toContain('Helped.');
    expect((await runs(cadre, session.id)).map((run) => run.agent)).toEqual(['helper']);
  });

  it('applies to a resume: a run may not be continued once its agent is denied', async () => {
    const store = createSqliteStore({ path: join(folder, 'resume.db') });
    const first = makeCadre({ script: mainCalls('agent', { agent: 'helper', task: 'Help' }), store });
    const session = await first.createSession();
    await first.send(session.id, 'go');
    await first.waitForIdle(session.id);
    const earlier = (await runs(first, session.id))[0];
    expect(earlier.status).toBe('completed');
    await first.close();
    open.splice(open.indexOf(first), 1);
    const second = makeCadre({
      script: [
        ...subagentRules,
        {
          when: { last_user_includes: 'again' },
          turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'helper', task: 'More', resume: earlier.id } }] }, { text: 'Done.' }],
        },
      ],
      store: createSqliteStore({ path: join(folder, 'resume.db') }),
      permissions: { deny: ['agent(helper)'] },
    });
    await second.send(session.id, 'again');
    await second.waitForIdle(session.id);
    expect((await outputs(second, session.id, 'agent')).at(-1)).toContain("denied by the rule deny 'agent(helper)'");
    expect((await runs(second, session.id)).map((run) => run.id)).toEqual([earlier.id]);
  });
});

describe('ask rules on delegation', () => {
  it('keeps the run queued outside the slot queue: later runs start past it; approval starts it', async () => {
    const cadre = makeCadre({
      script: mainCalls('agent_parallel', {
        run_in_background: true,
        tasks: [
          { agent: 'writer', task: 'Write' },
          { agent: 'helper', task: 'Help one' },
          { agent: 'helper', task: 'Help two' },
        ],
      }),
      permissions: { ask: ['agent(writer)'] },
      limits: { maxActivePerParent: 1 },
    });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const [ask] = await pendingAsks(cadre);
    expect(ask).toMatchObject({ tool: 'agent', argument: 'writer', summary: 'agent writer', status: 'pending' });
    expect(ask.id).toMatch(/^apr_/);
    // With one slot per parent, both helpers finish while the writer waits: it holds no place.
    await until(async () => (await runs(cadre, session.id)).filter((run) => run.agent === 'helper' && run.status === 'completed').length === 2);
    const waiting = (await runOf(cadre, session.id, 'writer'))!;
    expect(waiting).toMatchObject({ id: ask.run_id, status: 'queued', started_at: null, last_activity: 'awaiting approval: agent writer' });
    await cadre.approve(ask.id, { decision: 'approve' });
    const done = await until(async () => {
      const run = await runOf(cadre, session.id, 'writer');
      return run?.status === 'completed' && run;
    });
    expect(done.result?.text).toBe('Wrote the note.');
    const events = (await cadre.store.listRunEvents(done.id)).map((event) => event.type);
    expect(events.indexOf('approval-request')).toBeLessThan(events.indexOf('approval-resolve'));
    expect(events.indexOf('approval-resolve')).toBeLessThan(events.indexOf('run-start'));
    await cadre.waitForIdle(session.id);
  });

  it('ends a denied ask failed / denied, and the foreground agent call returns why', async () => {
    const cadre = makeCadre({ script: mainCalls('agent', { agent: 'writer', task: 'Write' }), permissions: { ask: ['agent'] } });
    const session = await cadre.createSession();
    const turn = cadre.send(session.id, 'go');
    const [ask] = await pendingAsks(cadre);
    await cadre.approve(ask.id, { decision: 'deny' });
    await turn;
    await cadre.waitForIdle(session.id);
    const run = (await runOf(cadre, session.id, 'writer'))!;
    expect(run).toMatchObject({ status: 'failed', error: { kind: 'denied' }, started_at: null });
    expect(run.error?.message).toContain('a person denied it');
    const [output] = await outputs(cadre, session.id, 'agent');
    expect(output).toContain('status: failed');
    expect(output).toContain('error: denied: Delegation denied');
  });

  it('tells the parent of a background run why its ask was denied, in the notification', async () => {
    const cadre = makeCadre({ script: mainCalls('agent', { agent: 'writer', task: 'Write', run_in_background: true }), permissions: { ask: ['agent'] } });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const [ask] = await pendingAsks(cadre);
    expect((await outputs(cadre, session.id, 'agent'))[0]).toContain("The run waits for a person's approval (awaiting approval: agent writer)");
    await cadre.approve(ask.id, { decision: 'deny' });
    await cadre.waitForIdle(session.id);
    const messages = await cadre.store.listMessages(session.id);
    const notified = messages.filter((message) => message.role === 'user' && JSON.stringify(message.content).includes('Delegation denied'));
    expect(notified).toHaveLength(1);
    expect(JSON.stringify(notified[0].content)).toContain('a person denied it');
  });

  it('ends a timed-out ask failed / denied', async () => {
    const cadre = makeCadre({
      script: mainCalls('agent', { agent: 'writer', task: 'Write' }),
      permissions: { ask: ['agent(writer)'] },
      limits: { approvalTimeoutMs: 30 },
    });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const run = (await runOf(cadre, session.id, 'writer'))!;
    expect(run).toMatchObject({ status: 'failed', error: { kind: 'denied' } });
    expect(run.error?.message).toContain('nobody answered the ask in time');
    const [approval] = await cadre.store.listApprovals({ run_id: run.id });
    expect(approval).toMatchObject({ status: 'denied', resolved_by: 'timeout' });
  });

  it('denies at once with no approver (--approvals deny), and approves with --yes', async () => {
    const denied = makeCadre({ script: mainCalls('agent', { agent: 'writer', task: 'Write' }), permissions: { ask: ['agent'] }, approvals: 'deny' });
    const session = await denied.createSession();
    await denied.send(session.id, 'go');
    await denied.waitForIdle(session.id);
    expect(await runOf(denied, session.id, 'writer')).toMatchObject({ status: 'failed', error: { kind: 'denied' } });
    expect((await denied.store.listApprovals({ session_id: session.id }))[0]).toMatchObject({ status: 'denied', resolved_by: 'no_approver' });

    const approved = makeCadre({ script: mainCalls('agent', { agent: 'writer', task: 'Write' }), permissions: { ask: ['agent'] }, approvals: 'yes' });
    const other = await approved.createSession();
    await approved.send(other.id, 'go');
    await approved.waitForIdle(other.id);
    expect(await runOf(approved, other.id, 'writer')).toMatchObject({ status: 'completed' });
  });

  it('ends an awaiting run as any stop does, closing its ask', async () => {
    const cadre = makeCadre({
      script: mainCalls('agent', { agent: 'writer', task: 'Write', run_in_background: true }),
      permissions: { ask: ['agent(writer)'] },
    });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const [ask] = await pendingAsks(cadre);
    const stopped = await cadre.stopRun(ask.run_id!);
    expect(stopped).toMatchObject({ status: 'canceled_by_user', started_at: null });
    await until(async () => (await cadre.store.getApproval(ask.id))?.status === 'canceled');
    await cadre.waitForIdle(session.id);
    expect((await cadre.store.getRun(ask.run_id!))?.status).toBe('canceled_by_user');
  });

  it('answers an ask with an "always" rule of the session for the next delegation', async () => {
    const cadre = makeCadre({
      script: [
        ...subagentRules,
        {
          turns: [
            { tool_calls: [{ name: 'agent', arguments: { agent: 'writer', task: 'One' } }] },
            { tool_calls: [{ name: 'agent', arguments: { agent: 'writer', task: 'Two' } }] },
            { text: 'Done.' },
          ],
        },
      ],
      permissions: { ask: ['agent(writer)'] },
    });
    const session = await cadre.createSession();
    const turn = cadre.send(session.id, 'go');
    const [ask] = await pendingAsks(cadre);
    await cadre.approve(ask.id, { decision: 'approve', always: true });
    await turn;
    await cadre.waitForIdle(session.id);
    expect((await runs(cadre, session.id)).map((run) => run.status)).toEqual(['completed', 'completed']);
    expect(await cadre.store.listApprovals({ session_id: session.id })).toHaveLength(1);
  });
});

describe('an awaiting delegation ask across a restart', () => {
  it('is neither started nor lost by recovery, and starts once approved', async () => {
    const path = join(folder, 'restart.db');
    const script = mainCalls('agent', { agent: 'writer', task: 'Write', run_in_background: true });
    const first = makeCadre({ script, store: createSqliteStore({ path }), permissions: { ask: ['agent(writer)'] }, leaseMs: 100 });
    const session = await first.createSession();
    await first.send(session.id, 'go');
    const [ask] = await pendingAsks(first);
    // The process goes away with the ask unanswered.
    open.splice(open.indexOf(first), 1);
    await first.close();

    const second = makeCadre({ script, store: createSqliteStore({ path }), permissions: { ask: ['agent(writer)'] }, leaseMs: 100 });
    const recovered = await until(async () => {
      const report = await second.recover();
      return report.resumed.includes(ask.run_id!) && report;
    });
    expect(recovered.resumed).toEqual([ask.run_id]);
    // Held again: still queued, never started, the same ask still pending.
    const held = await second.store.getRun(ask.run_id!);
    expect(held).toMatchObject({ status: 'queued', started_at: null, last_activity: 'awaiting approval: agent writer' });
    expect(await second.store.getApproval(ask.id)).toMatchObject({ status: 'pending' });
    expect(await second.store.listApprovals({ run_id: ask.run_id! })).toHaveLength(1);

    await second.approve(ask.id, { decision: 'approve' });
    const done = await until(async () => {
      const run = await second.store.getRun(ask.run_id!);
      return run?.status === 'completed' && run;
    });
    expect(done.result?.text).toBe('Wrote the note.');
  });
});

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { jsonSchema, tool } from 'ai';
import { z } from 'zod';
import { defineAgent } from '../agents/agent-definition.ts';
import type { ApprovalAnswer } from '../approvals/answer-approval.ts';
import { answerApproval } from '../approvals/answer-approval.ts';
import type { Approver, ApprovalMode } from '../approvals/approval-broker.ts';
import type { Limits } from '../config/limits.ts';
import type { PermissionsConfig } from '../permissions/permissions.ts';
import type { ApprovalRecord } from '../store/records.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';
import { scriptedLanguageModel, type Script } from '../testing/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { createWorkspaceTools } from '../tools/workspace-tools.ts';
import { systemNow } from '../util/clock.ts';
import { createCadre, type Cadre } from './create-cadre.ts';
import { toolOutputs } from './runtime-fixtures.ts';
import { eventually } from '../../test/helpers/eventually.ts';

const folder = mkdtempSync(join(tmpdir(), 'cadre-approvals-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

/** A tool that writes into `written` (a list standing in for files): an honest `write` risk. */
function noteTool(written: string[]) {
  return defineTool({
    name: 'note',
    description: 'Writes a note to a path',
    risk: 'write',
    inputSchema: z.object({ path: z.string(), text: z.string() }),
    argument: ({ path }) => path,
    execute: ({ path, text }) => {
      written.push(`${path}: ${text}`);
      return `wrote ${path}`;
    },
  });
}

const writer = defineAgent({ name: 'writer', description: 'Writes notes', system: 'Writer agent.', tools: ['note'] });
const noteCall = (path = 'docs/a.md') => ({ tool_calls: [{ name: 'note', arguments: { path, text: 'hello' } }] });

function writerScript(subagentTurns: Script[number]['turns'] = [noteCall(), { text: 'Wrote the note.' }]): Script {
  return [
    { when: { system_includes: 'Writer agent' }, turns: subagentTurns },
    { turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'writer', task: 'Write a note' } }] }, { text: 'Done.' }] },
  ];
}

interface Setup {
  script?: Script;
  approvals?: ApprovalMode;
  approver?: Approver;
  permissions?: PermissionsConfig;
  limits?: Partial<Limits>;
  store?: Store;
}

function makeCadre({ script = writerScript(), approvals, approver, permissions, limits, store }: Setup = {}) {
  const written: string[] = [];
  const cadre = createCadre({
    store: store ?? createSqliteStore({ path: ':memory:' }),
    model: scriptedLanguageModel(script),
    agents: [writer],
    tools: { note: noteTool(written) },
    approvals,
    approver,
    permissions,
    limits,
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return { cadre, written };
}

async function onlyRun(cadre: Cadre, sessionId: string) {
  const [run] = await cadre.store.listRuns({ parent_session_id: sessionId });
  return run;
}

async function approvalEvents(cadre: Cadre, runId: string) {
  return (await cadre.store.listRunEvents(runId))
    .filter((event) => event.type.startsWith('approval-'))
    .map((event) => ({ type: event.type, data: event.data }));
}

async function until<T>(look: () => Promise<T | undefined | null | false>, timeoutMs = 5000): Promise<T> {
  return (await eventually(look, { timeout: timeoutMs })) as T;
}

describe('asks for approval', () => {
  it('stores an ask, shows it as activity, and runs the tool once a person approves it with cadre.approve', async () => {
    const { cadre, written } = makeCadre({ approvals: 'wait' });
    const activities: string[] = [];
    const typed: unknown[] = [];
    cadre.subscribe((event) => {
      if (event.type === 'run-event' && event.event.type === 'activity') {
        activities.push(String(event.event.data.text));
        typed.push(event.event.data);
      }
    });
    const session = await cadre.createSession();
    const turn = cadre.send(session.id, 'go');
    const [ask] = await until(async () => (await cadre.pendingApprovals()).length > 0 && cadre.pendingApprovals());
    // The ask is told as data, its line beside it; the stored run shows it once its line is written.
    expect(typed).toContainEqual({ kind: 'awaiting_approval', tool: 'note', argument: 'docs/a.md', text: 'awaiting approval: note docs/a.md' });
    const waiting = await until(async () => {
      const [stored] = await cadre.store.listRuns({ parent_session_id: session.id });
      return stored?.activity?.kind === 'awaiting_approval' && stored;
    });
    expect(waiting).toMatchObject({
      activity: { kind: 'awaiting_approval', tool: 'note', argument: 'docs/a.md' },
      last_activity: 'awaiting approval: note docs/a.md',
    });
    expect(ask).toMatchObject({
      id: expect.stringMatching(/^apr_/),
      session_id: session.id,
      agent: 'writer',
      tool: 'note',
      argument: 'docs/a.md',
      risk: 'write',
      summary: 'note docs/a.md',
      status: 'pending',
    });
    expect(written).toEqual([]);
    const answered = await cadre.approve(ask.id, { decision: 'approve' });
    expect(answered).toMatchObject({ changed: true, approval: { status: 'approved', resolved_by: 'person' } });
    await turn;
    await cadre.waitForIdle(session.id);
    const run = await onlyRun(cadre, session.id);
    expect(written).toEqual(['docs/a.md: hello']);
    expect(run.status).toBe('completed');
    expect(activities).toContain('awaiting approval: note docs/a.md');
    expect(await approvalEvents(cadre, run.id)).toEqual([
      { type: 'approval-request', data: { approval_id: ask.id, tool: 'note', summary: 'note docs/a.md' } },
      { type: 'approval-resolve', data: { approval_id: ask.id, decision: 'approved', by: 'person' } },
    ]);
    expect(await cadre.approve(ask.id, { decision: 'deny' })).toMatchObject({ changed: false, approval: { status: 'approved' } });
    // Stored in the order it happened: the step and its tool call, then the ask and its answer, then the call's end.
    const order = (await cadre.store.listRunEvents(run.id))
      .map((event) => event.type)
      .filter((type) => ['step-start', 'tool-call-start', 'approval-request', 'approval-resolve', 'tool-call-end'].includes(type));
    expect(order.slice(0, 5)).toEqual(['step-start', 'tool-call-start', 'approval-request', 'approval-resolve', 'tool-call-end']);
  });

  it('denies at once when nobody can answer, and tells the model what was denied and how to allow it', async () => {
    const { cadre, written } = makeCadre();
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const run = await onlyRun(cadre, session.id);
    const [output] = toolOutputs(await cadre.store.listMessages(run.child_session_id), 'note');
    expect(output).toContain('Permission denied: note "docs/a.md" was not run');
    expect(output).toContain("--allow 'note(docs/a.md)'");
    expect(output).toContain('"permissions": {"allow": ["note(docs/a.md)"]}');
    expect(written).toEqual([]);
    expect((await approvalEvents(cadre, run.id)).at(-1)).toMatchObject({ data: { decision: 'denied', by: 'no_approver' } });
  });

  it('refuses a write outside the workspace before asking anyone: no ask is stored, the model hears why', async () => {
    const workspace = mkdtempSync(join(folder, 'workspace-'));
    const script = writerScript([{ tool_calls: [{ name: 'write_file', arguments: { path: '../escape.txt', content: 'out' } }] }, { text: 'Could not.' }]);
    const escaper = defineAgent({ name: 'writer', description: 'Writes files', system: 'Writer agent.', tools: ['write_file'] });
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      model: scriptedLanguageModel(script),
      agents: [escaper],
      tools: createWorkspaceTools({ root: workspace }),
      approvals: 'wait',
      maxRetries: 0,
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const run = await onlyRun(cadre, session.id);
    expect(toolOutputs(await cadre.store.listMessages(run.child_session_id), 'write_file')[0]).toContain('is outside the workspace');
    expect(await cadre.store.listApprovals({ session_id: session.id })).toEqual([]);
    expect(existsSync(join(workspace, '..', 'escape.txt'))).toBe(false);
  });

  it('approves every ask with yes (by: flag)', async () => {
    const { cadre, written } = makeCadre({ approvals: 'yes' });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const run = await onlyRun(cadre, session.id);
    expect(written).toHaveLength(1);
    expect((await approvalEvents(cadre, run.id)).at(-1)).toMatchObject({ data: { decision: 'approved', by: 'flag' } });
  });

  it('runs what the rules allow and refuses what they deny, without an ask', async () => {
    const allowed = makeCadre({ permissions: { allow: ['note(docs/*)'] } });
    const session = await allowed.cadre.createSession();
    await allowed.cadre.send(session.id, 'go');
    await allowed.cadre.waitForIdle(session.id);
    expect(allowed.written).toHaveLength(1);
    expect(await allowed.cadre.store.listApprovals()).toEqual([]);

    const denied = makeCadre({ permissions: { allow: ['write'], deny: ['note(docs/*)'] }, approvals: 'yes' });
    const other = await denied.cadre.createSession();
    await denied.cadre.send(other.id, 'go');
    await denied.cadre.waitForIdle(other.id);
    const run = await onlyRun(denied.cadre, other.id);
    expect(denied.written).toEqual([]);
    expect(await denied.cadre.store.listApprovals()).toEqual([]);
    expect(toolOutputs(await denied.cadre.store.listMessages(run.child_session_id), 'note')[0]).toContain("is denied by the rule deny 'note(docs/*)'");
  });

  it("lets an agent's own rules narrow the configuration's", async () => {
    const strict = defineAgent({ name: 'writer', description: 'Writes notes', system: 'Writer agent.', tools: ['note'], permissions: { deny: ['write'] } });
    const written: string[] = [];
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      model: scriptedLanguageModel(writerScript()),
      agents: [strict],
      tools: { note: noteTool(written) },
      permissions: { allow: ['note'] },
      maxRetries: 0,
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    expect(written).toEqual([]);
    const run = await onlyRun(cadre, session.id);
    expect(toolOutputs(await cadre.store.listMessages(run.child_session_id), 'note')[0]).toContain("denied by the rule deny 'write'");
  });

  it('denies an ask nobody answers in time (by: timeout)', async () => {
    const { cadre, written } = makeCadre({ approvals: 'wait', limits: { approvalTimeoutMs: 50 } });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    const run = await onlyRun(cadre, session.id);
    expect(written).toEqual([]);
    expect((await approvalEvents(cadre, run.id)).at(-1)).toMatchObject({ data: { decision: 'denied', by: 'timeout' } });
    expect(toolOutputs(await cadre.store.listMessages(run.child_session_id), 'note')[0]).toContain('nobody answered the ask in time');
  });

  it('ends a run stopped while it awaits approval as any stop does, and closes the ask', async () => {
    const { cadre, written } = makeCadre({ approvals: 'wait', script: writerScript([{ text: 'Starting on it.', ...noteCall() }, { text: 'never' }]) });
    const session = await cadre.createSession();
    const turn = cadre.send(session.id, 'go');
    const [ask] = await until(async () => (await cadre.pendingApprovals()).length > 0 && cadre.pendingApprovals());
    const stopped = await cadre.stopRun(ask.run_id!);
    await turn;
    expect(stopped).toMatchObject({ status: 'canceled_by_user', partial_result: 'Starting on it.' });
    expect(written).toEqual([]);
    expect(await cadre.store.getApproval(ask.id)).toMatchObject({ status: 'canceled', resolved_by: 'stop' });
    expect(await cadre.approve(ask.id, { decision: 'approve' })).toMatchObject({ changed: false });
    expect(written).toEqual([]);
  });

  it('asks the approver one ask at a time, and an always answer answers the queued ones by rule', async () => {
    let showing = 0;
    let most = 0;
    const shown: string[] = [];
    const approver: Approver = async (approval) => {
      showing++;
      most = Math.max(most, showing);
      shown.push(approval.id);
      await new Promise((resolve) => setTimeout(resolve, 30));
      showing--;
      return { decision: 'approve', always: true };
    };
    const script: Script = [
      { when: { system_includes: 'Writer agent' }, turns: [noteCall('docs/same.md'), { text: 'ok' }] },
      {
        turns: [
          { tool_calls: [{ name: 'agent_parallel', arguments: { tasks: [1, 2, 3].map((index) => ({ agent: 'writer', task: `Write ${index}` })) } }] },
          { text: 'Done.' },
        ],
      },
    ];
    const { cadre, written } = makeCadre({ script, approver });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    expect(written).toHaveLength(3);
    expect(most).toBe(1);
    expect(shown).toHaveLength(1);
    const asks = await cadre.store.listApprovals({ session_id: session.id });
    expect(asks.map((ask) => ask.resolved_by).sort()).toEqual(['person', 'rule', 'rule']);
    expect(await cadre.store.listSessionRules(session.id)).toMatchObject([{ rule: 'note(docs/same.md)', decision: 'allow' }]);
  });

  it('takes an answer written by another process (cadre approve) through the store', async () => {
    const path = join(folder, 'two-processes.db');
    const { cadre, written } = makeCadre({ approvals: 'wait', store: createSqliteStore({ path }) });
    const session = await cadre.createSession();
    const turn = cadre.send(session.id, 'go');
    await until(async () => (await cadre.pendingApprovals()).length > 0);
    await cadre.store.flush();
    const other = createSqliteStore({ path });
    const [ask] = await other.listApprovals({ statuses: ['pending'] });
    const answer: ApprovalAnswer = { decision: 'approve', always: true };
    expect(await answerApproval(other, ask.id, answer, systemNow)).toMatchObject({ changed: true });
    await other.close();
    await turn;
    await cadre.waitForIdle(session.id);
    expect(written).toHaveLength(1);
    expect(await cadre.store.listSessionRules(session.id)).toMatchObject([{ rule: 'note(docs/a.md)' }]);
  });

  it('treats a tool not made with defineTool as network: it asks by default', async () => {
    let ran = 0;
    const raw = tool({
      description: 'Fetches a page',
      inputSchema: jsonSchema<{ url: string }>({ type: 'object', properties: { url: { type: 'string' } } }),
      execute: async () => (ran++, 'page'),
    });
    const fetcher = defineAgent({ name: 'writer', description: 'Fetches', system: 'Writer agent.', tools: ['fetch_page'] });
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      model: scriptedLanguageModel(writerScript([{ tool_calls: [{ name: 'fetch_page', arguments: { url: 'https://example.com' } }] }, { text: 'ok' }])),
      agents: [fetcher],
      tools: { fetch_page: raw },
      approvals: 'yes',
      maxRetries: 0,
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    await cadre.waitForIdle(session.id);
    expect(ran).toBe(1);
    expect(await cadre.store.listApprovals()).toMatchObject([{ tool: 'fetch_page', risk: 'network', argument: null, status: 'approved', resolved_by: 'flag' }]);
  });

  it("gates the primary agent's own tool calls too", async () => {
    const main = defineAgent({ name: 'main', description: 'Primary', system: 'Primary agent.', tools: ['note'], mode: 'primary' });
    const written: string[] = [];
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      model: scriptedLanguageModel([{ turns: [noteCall('notes.md'), { text: 'Done.' }] }]),
      agents: [main],
      tools: { note: noteTool(written) },
      approver: async (approval: ApprovalRecord) => ({ decision: approval.tool === 'note' ? 'deny' : 'approve' }),
      maxRetries: 0,
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    expect(written).toEqual([]);
    const [ask] = await cadre.store.listApprovals();
    expect(ask).toMatchObject({ run_id: null, agent: 'main', status: 'denied', resolved_by: 'person' });
    expect(toolOutputs(await cadre.store.listMessages(session.id), 'note')[0]).toContain('a person denied it');
  });
});

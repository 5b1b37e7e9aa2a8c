import { afterEach, describe, expect, it } from 'vitest';
import type { Cadre } from '../runtime/create-cadre.ts';
import type { PermissionsConfig } from '../permissions/permissions.ts';
import type { ApprovalRecord } from '../store/records.ts';
import { createDashboardApp } from './create-server.ts';
import { createTestCadre, waitForRun } from './server-fixtures.ts';
import { eventually } from '../../test/helpers/eventually.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) {
    for (const session of await cadre.store.listSessions()) await cadre.stopSession(session.id);
    await cadre.close();
  }
});

function setup(permissions?: PermissionsConfig) {
  const notes: string[] = [];
  const cadre = createTestCadre({ notes, permissions });
  open.push(cadre);
  const app = createDashboardApp({
    cadre,
    onError: (error) => {
      throw error;
    },
  });
  const post = (path: string, body: unknown) =>
    app.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  return { cadre, app, post, notes };
}

async function pendingAsk(app: ReturnType<typeof setup>['app'], sessionId: string): Promise<ApprovalRecord> {
  return eventually(async () => ((await (await app.request(`/api/approvals?session=${sessionId}`)).json()) as { approvals: ApprovalRecord[] }).approvals[0], {
    what: 'an ask',
  });
}

describe('the approvals API', () => {
  it('lists a pending ask and approves it once; a second answer is a 409', async () => {
    const { cadre, app, post, notes } = setup();
    const { session_id: sessionId } = await (await post('/api/sessions', { prompt: 'Write a NOTE' })).json();
    const ask = await pendingAsk(app, sessionId);
    expect(ask).toMatchObject({
      agent: 'writer',
      tool: 'note',
      argument: 'docs/notes.md',
      status: 'pending',
      preview: { kind: 'diff', path: 'docs/notes.md', diff: '--- /dev/null\n+++ b/docs/notes.md\n@@ -0,0 +1 @@\n+hello' },
    });
    expect(notes).toEqual([]);
    expect((await (await app.request(`/api/approvals/${ask.id}`)).json()).approval.id).toBe(ask.id);

    const approved = await post(`/api/approvals/${ask.id}`, { decision: 'approve', always: true });
    expect(approved.status).toBe(200);
    expect((await approved.json()).approval).toMatchObject({ status: 'approved', resolved_by: 'person', always: true });
    const run = await waitForRun(cadre, sessionId, (each) => each.status === 'completed');
    expect(notes).toEqual(['docs/notes.md: hello']);
    expect((await cadre.store.listRunEvents(run.id)).map((event) => event.type)).toContain('approval-resolve');

    const again = await post(`/api/approvals/${ask.id}`, { decision: 'deny' });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: `${ask.id} was already approved (always) by person.` });
    expect((await (await app.request('/api/approvals')).json()).approvals).toEqual([]);
    expect((await (await app.request('/api/approvals?status=all')).json()).approvals).toHaveLength(1);
  });

  it('denies with decision deny, and refuses bad bodies and unknown ids', async () => {
    const { cadre, app, post, notes } = setup();
    const { session_id: sessionId } = await (await post('/api/sessions', { prompt: 'Write a NOTE' })).json();
    const ask = await pendingAsk(app, sessionId);
    expect((await post(`/api/approvals/${ask.id}`, { decision: 'maybe' })).status).toBe(400);
    expect((await post(`/api/approvals/${ask.id}`, { decision: 'approve', always: 'yes' })).status).toBe(400);
    expect((await post('/api/approvals/apr_missing', { decision: 'approve' })).status).toBe(404);
    expect((await app.request('/api/approvals/apr_missing')).status).toBe(404);
    expect((await post(`/api/approvals/${ask.id}`, { decision: 'deny' })).status).toBe(200);
    await waitForRun(cadre, sessionId, (each) => each.status === 'completed');
    expect(notes).toEqual([]);
  });
});

describe('the approvals API and rules on delegation', () => {
  it('lists an ask on a delegation while its run waits queued, and starts the run once approved with POST /api/approvals/:id', async () => {
    const { cadre, app, post, notes } = setup({ ask: ['agent(writer)'] });
    const { session_id: sessionId } = await (await post('/api/sessions', { prompt: 'Write a NOTE' })).json();
    const ask = await pendingAsk(app, sessionId);
    expect(ask).toMatchObject({ tool: 'agent', argument: 'writer', summary: 'agent writer', status: 'pending' });
    const held = await waitForRun(cadre, sessionId, (each) => each.id === ask.run_id);
    expect(held).toMatchObject({ status: 'queued', started_at: null, last_activity: 'awaiting approval: agent writer' });
    expect((await post(`/api/approvals/${ask.id}`, { decision: 'approve' })).status).toBe(200);
    // Started, the writer's own call asks next, as any tool call does.
    const noteAsk = await eventually(async () => (await cadre.pendingApprovals({ sessionId })).find((each) => each.tool === 'note'), { what: 'the note ask' });
    expect((await post(`/api/approvals/${noteAsk.id}`, { decision: 'approve' })).status).toBe(200);
    await waitForRun(cadre, sessionId, (each) => each.id === ask.run_id && each.status === 'completed');
    expect(notes).toEqual(['docs/notes.md: hello']);
  });

  it('ends the run failed / denied when the ask is denied with POST /api/approvals/:id', async () => {
    const { cadre, app, post, notes } = setup({ ask: ['agent(writer)'] });
    const { session_id: sessionId } = await (await post('/api/sessions', { prompt: 'Write a NOTE' })).json();
    const ask = await pendingAsk(app, sessionId);
    expect((await post(`/api/approvals/${ask.id}`, { decision: 'deny' })).status).toBe(200);
    const run = await waitForRun(cadre, sessionId, (each) => each.id === ask.run_id && each.status === 'failed');
    expect(run.error).toMatchObject({ kind: 'denied', message: expect.stringContaining('a person denied it') });
    expect(notes).toEqual([]);
  });
});

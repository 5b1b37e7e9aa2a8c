import { describe, expect, it } from 'vitest';
import type { WorkflowRecord } from './records.ts';
import type { StoreCaseContext } from './store.case.ts';
import { runFixture, eventFixture } from './store-fixtures.ts';

/** A running workflow as the store keeps it, with fixed values that cases override. */
export function workflowFixture(overrides: Partial<WorkflowRecord> = {}): WorkflowRecord {
  return {
    id: 'wf_1',
    name: 'review',
    status: 'running',
    session_id: 'ses_1',
    parent_run_id: null,
    depth: 0,
    input: { files: ['a.ts', 'b.ts'] },
    output: null,
    error: null,
    phases: [],
    log: [],
    source: { kind: 'file', path: '/work/review.workflow.js', text: 'export default async () => 1;' },
    max_runs: null,
    created_at: '2025-01-01T00:00:01.000Z',
    updated_at: '2025-01-01T00:00:01.000Z',
    ended_at: null,
    lease_owner: 'host:1:abc',
    lease_expires_at: '2025-01-01T00:00:16.000Z',
    stop_requested_at: null,
    ...overrides,
  };
}

/** Workflows (section 22) and the runs they make. */
export function workflowCases({ store, reopen }: StoreCaseContext): void {
  describe('workflows', () => {
    it('stores a workflow and returns every field as stored, also after reopening', async () => {
      const workflow = workflowFixture({ phases: [{ name: 'review', at: '2025-01-01T00:00:02.000Z' }], log: [{ at: '2025-01-01T00:00:03.000Z', text: 'two files' }] });
      await store().insertWorkflow(workflow);
      expect(await store().getWorkflow('wf_1')).toEqual(workflow);
      expect(await store().getWorkflow('wf_none')).toBeNull();
      if (reopen) expect(await (await reopen()).getWorkflow('wf_1')).toEqual(workflow);
    });

    it('lists workflows newest first, by status and session, up to a limit', async () => {
      await store().insertWorkflow(workflowFixture({ id: 'wf_1', created_at: '2025-01-01T00:00:01.000Z' }));
      await store().insertWorkflow(workflowFixture({ id: 'wf_2', created_at: '2025-01-01T00:00:02.000Z', status: 'completed', session_id: 'ses_2' }));
      await store().insertWorkflow(workflowFixture({ id: 'wf_3', created_at: '2025-01-01T00:00:03.000Z' }));
      expect((await store().listWorkflows()).map((workflow) => workflow.id)).toEqual(['wf_3', 'wf_2', 'wf_1']);
      expect((await store().listWorkflows({ statuses: ['running'] })).map((workflow) => workflow.id)).toEqual(['wf_3', 'wf_1']);
      expect((await store().listWorkflows({ statuses: [] })).length).toBe(0);
      expect((await store().listWorkflows({ session_id: 'ses_2' })).map((workflow) => workflow.id)).toEqual(['wf_2']);
      expect((await store().listWorkflows({ limit: 1 })).map((workflow) => workflow.id)).toEqual(['wf_3']);
    });

    it('changes a workflow only while it stands as the guard says', async () => {
      await store().insertWorkflow(workflowFixture());
      const ended = await store().updateWorkflow(
        'wf_1',
        { status: 'completed', output: { summary: 'ok' }, ended_at: '2025-01-01T00:00:09.000Z' },
        { statuses: ['running'], lease_owner: 'host:1:abc' },
      );
      expect(ended).toMatchObject({ status: 'completed', output: { summary: 'ok' }, ended_at: '2025-01-01T00:00:09.000Z' });
      expect(await store().updateWorkflow('wf_1', { status: 'failed' }, { statuses: ['running'] })).toBeNull();
      expect(await store().updateWorkflow('wf_1', { log: [{ at: 'x', text: 'y' }] }, { lease_owner: 'host:2:def' })).toBeNull();
      expect((await store().getWorkflow('wf_1'))?.status).toBe('completed');
      expect(await store().updateWorkflow('wf_none', { status: 'failed' })).toBeNull();
      await expect(store().updateWorkflow('wf_1', { name: 'other' } as never)).rejects.toThrow(TypeError);
    });

    it('lets one process claim a running workflow whose lease ended, and its owner renew it', async () => {
      await store().insertWorkflow(workflowFixture());
      // The lease is alive: another process cannot take it, its owner can.
      expect(await store().claimWorkflow('wf_1', 'host:2:def', '2025-01-01T00:01:00.000Z', '2025-01-01T00:00:10.000Z')).toBeNull();
      expect(await store().claimWorkflow('wf_1', 'host:1:abc', '2025-01-01T00:00:30.000Z', '2025-01-01T00:00:10.000Z')).toMatchObject({
        lease_expires_at: '2025-01-01T00:00:30.000Z',
      });
      const claims = await Promise.all([
        store().claimWorkflow('wf_1', 'host:2:def', '2025-01-01T00:02:00.000Z', '2025-01-01T00:01:00.000Z'),
        store().claimWorkflow('wf_1', 'host:3:ghi', '2025-01-01T00:02:00.000Z', '2025-01-01T00:01:00.000Z'),
      ]);
      expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
      await store().updateWorkflow('wf_1', { status: 'failed' });
      expect(await store().claimWorkflow('wf_1', 'host:4:jkl', '2025-01-01T00:09:00.000Z', '2025-01-01T00:08:00.000Z')).toBeNull();
    });

    it("keeps a run's workflow call and input hash, and lists a workflow's runs", async () => {
      await store().insertRun(runFixture({ id: 'run_1', workflow: { id: 'wf_1', key: 'p0#0' }, input_hash: 'abc' }), eventFixture('run_1', 'run-queued'));
      await store().insertRun(runFixture({ id: 'run_2', created_at: '2025-01-01T00:00:02.000Z', workflow: { id: 'wf_2', key: '#0' }, input_hash: 'def' }), eventFixture('run_2', 'run-queued'));
      await store().insertRun(runFixture({ id: 'run_3', created_at: '2025-01-01T00:00:03.000Z' }), eventFixture('run_3', 'run-queued'));
      expect(await store().getRun('run_1')).toMatchObject({ workflow: { id: 'wf_1', key: 'p0#0' }, input_hash: 'abc' });
      const plain = await store().getRun('run_3');
      expect([plain?.workflow ?? null, plain?.input_hash ?? null]).toEqual([null, null]);
      expect((await store().listRuns({ workflow_id: 'wf_1' })).map((run) => run.id)).toEqual(['run_1']);
      expect((await store().listRuns({ workflow_id: 'wf_2', statuses: ['queued'] })).map((run) => run.id)).toEqual(['run_2']);
    });
  });
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApprovalRecord } from './records.ts';
import type { StoreCaseContext } from './store.case.ts';
import { timeSortedId } from '../util/clock.ts';

/** An ask as the store keeps it, with fixed values that cases override. */
export function approvalFixture(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: 'apr_1',
    session_id: 'ses_1',
    run_id: 'run_1',
    agent: 'coder',
    tool: 'bash',
    argument: 'npm test',
    risk: 'exec',
    summary: 'bash npm test',
    status: 'pending',
    created_at: '2025-01-01T00:00:05.000Z',
    resolved_at: null,
    resolved_by: null,
    always: false,
    owner: 'host:1:abc',
    preview: null,
    ...overrides,
  };
}

/** Asks for approval and the rules people set for a session. */
export function approvalCases({ store, reopen }: StoreCaseContext): void {
  describe('approvals', () => {
    it('stores an ask and returns every field as stored', async () => {
      const ask = approvalFixture({ argument: null, run_id: null });
      await store().insertApproval(ask);
      expect(await store().getApproval('apr_1')).toEqual(ask);
      const edit = approvalFixture({
        id: 'apr_2',
        tool: 'edit_file',
        argument: 'src/a.ts',
        preview: { kind: 'diff', path: 'src/a.ts', diff: '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-one\n+two' },
      });
      await store().insertApproval(edit);
      expect(await store().getApproval('apr_2')).toEqual(edit);
      expect((await store().listApprovals({ statuses: ['pending'] })).map((each) => each.preview)).toEqual([null, edit.preview]);
      expect(await store().getApproval('apr_missing')).toBeNull();
    });

    it('lists asks oldest first, filtered by status, session, run and owner', async () => {
      await store().insertApproval(approvalFixture({ id: 'apr_2', created_at: '2025-01-01T00:00:06.000Z' }));
      await store().insertApproval(approvalFixture({ id: 'apr_1', session_id: 'ses_2', run_id: 'run_2', owner: 'other' }));
      await store().insertApproval(approvalFixture({ id: 'apr_3', status: 'approved', created_at: '2025-01-01T00:00:07.000Z' }));
      const ids = async (query: Parameters<ReturnType<typeof store>['listApprovals']>[0]) => (await store().listApprovals(query)).map((ask) => ask.id);
      expect(await ids({})).toEqual(['apr_1', 'apr_2', 'apr_3']);
      expect(await ids({ statuses: ['pending'] })).toEqual(['apr_1', 'apr_2']);
      expect(await ids({ statuses: [] })).toEqual([]);
      expect(await ids({ session_id: 'ses_1' })).toEqual(['apr_2', 'apr_3']);
      expect(await ids({ run_id: 'run_2' })).toEqual(['apr_1']);
      expect(await ids({ owner: 'other' })).toEqual(['apr_1']);
      expect(await ids({ limit: 1 })).toEqual(['apr_1']);
    });

    it('answers a pending ask once, and stores its always rule with it', async () => {
      await store().insertApproval(approvalFixture());
      const answered = await store().resolveApproval({
        id: 'apr_1',
        status: 'approved',
        by: 'person',
        at: '2025-01-01T00:00:09.000Z',
        rule: { rule: 'bash(npm test)', decision: 'allow' },
      });
      expect(answered).toEqual(approvalFixture({ status: 'approved', resolved_by: 'person', resolved_at: '2025-01-01T00:00:09.000Z', always: true }));
      expect(await store().resolveApproval({ id: 'apr_1', status: 'denied', by: 'timeout', at: '2025-01-01T00:00:10.000Z' })).toBeNull();
      expect(await store().resolveApproval({ id: 'apr_missing', status: 'denied', by: 'person', at: '2025-01-01T00:00:10.000Z' })).toBeNull();
      expect((await store().getApproval('apr_1'))?.status).toBe('approved');
      expect(await store().listSessionRules('ses_1')).toEqual([
        { session_id: 'ses_1', rule: 'bash(npm test)', decision: 'allow', created_at: '2025-01-01T00:00:09.000Z', approval_id: 'apr_1' },
      ]);
      expect(await store().listSessionRules('ses_2')).toEqual([]);
    });

    it('lets exactly one of any number of racing answers win', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              status: fc.constantFrom('approved', 'denied', 'canceled' as const),
              by: fc.constantFrom('person', 'timeout', 'stop', 'rule' as const),
            }),
            { minLength: 1, maxLength: 6 },
          ),
          fc.integer({ min: 0, max: 1_000_000 }),
          async (answers, salt) => {
            const id = `apr_race_${salt}_${timeSortedId('r')}`;
            await store().insertApproval(approvalFixture({ id }));
            const results = await Promise.all(answers.map((answer) => store().resolveApproval({ id, at: '2025-01-01T00:00:09.000Z', ...answer })));
            const winners = results.filter((result) => result !== null);
            expect(winners).toHaveLength(1);
            const stored = await store().getApproval(id);
            expect(stored).toEqual(winners[0]);
            expect(stored?.status).toBe(answers[results.findIndex((result) => result !== null)].status);
          },
        ),
        { numRuns: 30 },
      );
    });

    it('keeps asks, answers and rules across a reopen', async () => {
      if (!reopen) return;
      await store().insertApproval(approvalFixture());
      await store().insertApproval(approvalFixture({ id: 'apr_2' }));
      await store().resolveApproval({ id: 'apr_1', status: 'denied', by: 'person', at: '2025-01-01T00:00:09.000Z', rule: { rule: 'bash', decision: 'deny' } });
      const reopened = await reopen();
      expect((await reopened.getApproval('apr_1'))?.status).toBe('denied');
      expect((await reopened.listApprovals({ statuses: ['pending'] })).map((ask) => ask.id)).toEqual(['apr_2']);
      expect((await reopened.listSessionRules('ses_1')).map((rule) => rule.rule)).toEqual(['bash']);
    });
  });
}

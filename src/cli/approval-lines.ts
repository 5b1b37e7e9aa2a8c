import { describeResolution } from '../approvals/answer-approval.ts';
import type { ApprovalRecord } from '../store/records.ts';

/** `[apr_...] writer (run_...) asks to run: bash npm test`, with how to answer from elsewhere. */
export function describeAsk(approval: ApprovalRecord, { hint = true } = {}): string {
  const who = approval.run_id === null ? approval.agent : `${approval.agent} (${approval.run_id})`;
  const line = `[${approval.id}] ${who} asks to run: ${approval.summary}`;
  return hint ? `${line}  (answer: cadre approve ${approval.id} [--deny] [--always])` : line;
}

/**
 * What an ask denied because nobody could answer it (off a terminal, `--approvals deny`) adds:
 * how to let asks through next time.
 */
export const noApproverHint = '(nobody could answer here; to let asks through, run with --approvals wait to answer them from elsewhere, or --yes to approve them all)';

/** `[apr_...] approved by person: bash npm test`; a denial by no approver says how to let asks through. */
export function describeAnswer(approval: ApprovalRecord): string {
  const line = `[${approval.id}] ${describeResolution(approval)}: ${approval.summary}`;
  return approval.resolved_by === 'no_approver' ? `${line}  ${noApproverHint}` : line;
}

/** The line for an approval event of the live bus: an ask or its answer. */
export function approvalLine(approval: ApprovalRecord, options?: { hint?: boolean }): string {
  return approval.status === 'pending' ? describeAsk(approval, options) : describeAnswer(approval);
}

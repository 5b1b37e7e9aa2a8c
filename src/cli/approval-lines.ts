import { describeResolution } from '../approvals/answer-approval.ts';
import { delegationTool } from '../permissions/permission-rule.ts';
import type { ApprovalPreview, ApprovalRecord } from '../store/records.ts';

/**
 * `[apr_...] writer (run_...) asks to run: bash npm test`, with how to answer from elsewhere. An ask
 * to delegate is the caller's, about a run it would start: `[apr_...] main asks to start agent scout (run_...)`.
 */
export function describeAsk(approval: ApprovalRecord, { hint = true } = {}): string {
  const held = approval.run_id === null ? '' : ` (${approval.run_id})`;
  const line =
    approval.tool === delegationTool
      ? `[${approval.id}] ${approval.agent} asks to start ${approval.summary}${held}`
      : `[${approval.id}] ${approval.agent}${held} asks to run: ${approval.summary}`;
  return hint ? `${line}  (answer: cadre approve ${approval.id} [--deny] [--always])` : line;
}

/**
 * What an ask denied because nobody could answer it (off a terminal, `--approvals deny`) adds:
 * how to let asks through next time.
 */
export const noApproverHint =
  '(nobody could answer here; to let asks through, run with --approvals wait to answer them from elsewhere, or --yes to approve them all)';

/** `[apr_...] approved by person: bash npm test`; a denial by no approver says how to let asks through. */
export function describeAnswer(approval: ApprovalRecord): string {
  const line = `[${approval.id}] ${describeResolution(approval)}: ${approval.summary}`;
  return approval.resolved_by === 'no_approver' ? `${line}  ${noApproverHint}` : line;
}

/**
 * A line of a file or command as a terminal can show it safely: a CRLF line's `\r` goes, other
 * control characters (an escape sequence in a file would drive the terminal) are written as `\u001b`.
 */
function visible(line: string): string {
  return line.replace(/\r$/, '').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * What an ask shows of its call, indented under its line: the diff of a file write or edit, or
 * `bash`'s full command (`$ npm test`). Empty when there is nothing more to show than the
 * ask's line (a command that fits in it whole). An ask stored without a preview shows a long
 * argument whole instead.
 */
export function describePreview(approval: Pick<ApprovalRecord, 'preview' | 'argument' | 'summary' | 'tool'>): string {
  const preview: ApprovalPreview | null = approval.preview;
  const indent = (text: string) =>
    text
      .split('\n')
      .map((line) => `    ${visible(line)}`.trimEnd())
      .join('\n');
  if (preview === null) return approval.argument !== null && approval.argument.length > 60 ? indent(approval.argument) : '';
  if (preview.kind === 'diff') return indent(preview.diff);
  return approval.summary === `${approval.tool} ${preview.command}` ? '' : indent(`$ ${preview.command}`);
}

/** The line for an approval event of the live bus: an ask, with what it would do, or its answer. */
export function approvalLine(approval: ApprovalRecord, options?: { hint?: boolean }): string {
  if (approval.status !== 'pending') return describeAnswer(approval);
  const preview = describePreview(approval);
  return preview === '' ? describeAsk(approval, options) : `${describeAsk(approval, options)}\n${preview}`;
}

import type { ApprovalRecord } from '../store/records.ts';

/** Why a person's ask ended denied, as the model reads it: who (or what) answered it. */
export function deniedAskReason(approval: Pick<ApprovalRecord, 'resolved_by'>): string {
  switch (approval.resolved_by) {
    case 'person':
      return 'a person denied it';
    case 'rule':
      return 'a person denied it for the rest of the session';
    case 'timeout':
      return 'nobody answered the ask in time';
    default:
      return 'it needs a person’s approval and nobody could answer (cadre run off a terminal or with --approvals deny)';
  }
}

import { ConfigError } from '../errors/config-error.ts';
import { exactPattern } from '../permissions/permission-rule.ts';
import type { ApprovalRecord, ApprovalResolver } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';

/** A person's answer to an ask. */
export interface ApprovalAnswer {
  decision: 'approve' | 'deny';
  /** Make the answer a rule for the rest of the session. @default false */
  always?: boolean;
}

/** What {@link answerApproval} did. */
export interface AnsweredApproval {
  approval: ApprovalRecord;
  /** False when the ask was answered already (by someone else, a rule, the timeout or a stop). */
  changed: boolean;
}

/** The rule an "always" answer to `approval` adds to its session: the same tool with the same argument. */
export function alwaysRuleOf(approval: Pick<ApprovalRecord, 'tool' | 'argument'>): string {
  return approval.argument === null || approval.argument.trim() === '' ? approval.tool : `${approval.tool}(${exactPattern(approval.argument)})`;
}

/**
 * Answers a pending ask from any process: `cadre approve`, the HTTP API, the dashboard. The store
 * writes the answer only if the ask is still pending, so racing answers resolve it exactly once;
 * the process that waits for the ask notices within its poll interval.
 * @throws {ConfigError} when there is no such ask.
 */
export async function answerApproval(store: Store, id: string, answer: ApprovalAnswer, now: Now, by: ApprovalResolver = 'person'): Promise<AnsweredApproval> {
  const current = await store.getApproval(id);
  if (!current) throw new ConfigError(`No approval '${id}'. List the pending ones with: cadre approvals`);
  const status = answer.decision === 'approve' ? 'approved' : 'denied';
  const rule = answer.always ? { rule: alwaysRuleOf(current), decision: answer.decision === 'approve' ? ('allow' as const) : ('deny' as const) } : undefined;
  const resolved = await store.resolveApproval({ id, status, by, at: now(), rule });
  if (resolved) return { approval: resolved, changed: true };
  return { approval: (await store.getApproval(id)) ?? current, changed: false };
}

/** `approved by person`, `denied by timeout`: how an ask ended, for people. */
export function describeResolution(approval: ApprovalRecord): string {
  if (approval.status === 'pending') return 'pending';
  const status = approval.status === 'canceled' ? 'closed' : approval.status;
  const by = approval.resolved_by === 'stop' ? 'its run stopped' : (approval.resolved_by ?? 'unknown');
  return `${status}${approval.always ? ' (always)' : ''} by ${by}`;
}

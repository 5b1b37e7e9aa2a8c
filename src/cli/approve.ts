import { alwaysRuleOf, answerApproval, describeResolution } from '../approvals/answer-approval.ts';
import { systemNow } from '../util/clock.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { StoreFlags } from './command-options.ts';
import { openCliStore } from './open-runtime.ts';

/** Options of `cadre approve`. */
export interface ApproveFlags extends StoreFlags {
  deny?: boolean;
  always?: boolean;
  json?: boolean;
}

/**
 * `cadre approve APPROVAL_ID [--deny] [--always]`: a person's answer, from any process. The
 * process whose run asked notices it within a quarter of a second. Exit 0 when this answer
 * decided the ask, 1 when it was answered already (by someone, a rule, the timeout or a stop).
 */
export async function approveCommand(context: CliContext, id: string, flags: ApproveFlags): Promise<number> {
  const { store, close } = await openCliStore(context, flags, { writes: true });
  try {
    const decision = flags.deny ? 'deny' : 'approve';
    const { approval, changed } = await answerApproval(store, id, { decision, always: flags.always === true }, systemNow);
    await store.flush();
    const rule = approval.always ? `${decision === 'approve' ? 'allow' : 'deny'} ${alwaysRuleOf(approval)}` : null;
    if (!changed) {
      const message = `${approval.id} was already ${describeResolution(approval)}: ${approval.summary}`;
      if (flags.json) writeLine(context.stdout, JSON.stringify({ type: 'error', message, approval }));
      else writeLine(context.stderr, `cadre: ${message}`);
      return 1;
    }
    if (flags.json) writeLine(context.stdout, JSON.stringify({ type: 'approval-resolve', approval, session_rule: changed && rule !== null ? rule : null }));
    else
      writeLine(context.stdout, `${approval.id} ${approval.status}: ${approval.summary}${rule === null ? '' : ` (rule for the rest of the session: ${rule})`}`);
    return 0;
  } finally {
    await close();
  }
}

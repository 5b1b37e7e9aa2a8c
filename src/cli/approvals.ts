import { formatElapsed } from '../delegation/run-views.ts';
import { clampActivity } from '../runs/activity.ts';
import { ownerIsGone } from '../util/owner-liveness.ts';
import type { ApprovalRecord } from '../store/records.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { StoreFlags } from './command-options.ts';
import { openCliStore } from './open-runtime.ts';
import { formatTable } from './run-lines.ts';
import { describePreview } from './approval-lines.ts';

/** One row of `cadre approvals`: id, run, agent, tool, summary, waiting since. */
export function approvalRow(approval: ApprovalRecord, now: string): string[] {
  return [
    approval.id,
    approval.run_id ?? '(primary)',
    approval.agent,
    approval.tool,
    clampActivity(approval.summary, 60),
    `${approval.created_at.replace('T', ' ').slice(0, 19)} (${formatElapsed({ created_at: approval.created_at, started_at: null, ended_at: null }, now)})`,
  ];
}

/**
 * `cadre approvals [--json]`: the asks waiting for a person, oldest first, from every process,
 * each with what it would do (a diff, a command) under the table; `--json` gives each its `preview`.
 */
export async function approvalsCommand(context: CliContext, flags: StoreFlags): Promise<number> {
  const { store, close } = await openCliStore(context, flags);
  try {
    // Asks of a process that died wait for nobody; the next cadre run or serve closes them.
    const stored = await store.listApprovals({ statuses: ['pending'] });
    const pending = stored.filter((approval) => !ownerIsGone(approval.owner));
    const orphaned = stored.length - pending.length;
    if (orphaned > 0) writeLine(context.stderr, `(${orphaned} ask${orphaned === 1 ? '' : 's'} of processes that are gone left out)`);
    if (flags.json) {
      writeLine(context.stdout, JSON.stringify(pending, null, 2));
      return 0;
    }
    if (pending.length === 0) {
      writeLine(context.stdout, '(no pending approvals)');
      return 0;
    }
    const now = new Date().toISOString();
    writeLine(
      context.stdout,
      formatTable(
        ['ID', 'RUN', 'AGENT', 'TOOL', 'SUMMARY', 'WAITING SINCE'],
        pending.map((approval) => approvalRow(approval, now)),
      ),
    );
    // Under the table, what each ask would do: its diff, or its command when the summary cuts it.
    for (const approval of pending) {
      const preview = describePreview(approval);
      if (preview !== '') writeLine(context.stdout, `\n${approval.id}  ${approval.summary}\n${preview}`);
    }
    writeLine(context.stderr, 'Answer with: cadre approve ID [--deny] [--always]');
    return 0;
  } finally {
    await close();
  }
}

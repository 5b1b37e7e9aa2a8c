import { formatElapsed } from '../delegation/run-views.ts';
import { ConfigError } from '../errors/config-error.ts';
import { cacheTokensText } from '../export/cache-tokens-text.ts';
import { displayStatus, elapsedUntil, viewRun } from '../runs/run-owner.ts';
import { totalTokens } from '../runs/token-budget.ts';
import type { RunEventRecord, RunMessage, RunRecord, RunWorktree } from '../store/records.ts';
import { worktreeLine } from '../worktrees/worktree-records.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { StoreFlags } from './command-options.ts';
import { openCliStore } from './open-runtime.ts';

/** The detail of one event on the timeline of `cadre show`. */
export function describeEvent(event: Pick<RunEventRecord, 'type' | 'data'>): string {
  const data = event.data;
  switch (event.type) {
    case 'tool-call-start':
      return String(data.label ?? data.tool ?? '');
    case 'tool-call-end':
      return `${String(data.tool ?? '')} ${data.ok === false ? 'failed' : 'ok'}`;
    case 'activity':
      return String(data.text ?? '');
    default:
      return Object.entries(data)
        .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
        .join(' ');
  }
}

function seconds(from: string, to: string): string {
  return `+${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1)}s`;
}

function notificationState({ delivered_at: deliveredAt, suppressed }: NonNullable<RunRecord['notification']>): string {
  if (suppressed) return 'no (suppressed: canceled by its parent, or its result was already read)';
  return deliveredAt ? `delivered ${deliveredAt}` : 'pending (its parent gets it before its next model call, or when cadre restarts)';
}

/** One message sent to the run, on `cadre show`: who sent it, when, where it arrived, its text. */
export function messageLine(message: RunMessage): string {
  const from = message.from === 'person' ? 'a person' : 'the parent';
  const where =
    message.delivered_at === null
      ? 'pending (the subagent gets it before its next model call)'
      : message.delivered_to === 'task'
        ? `added to the task ${message.delivered_at}`
        : `delivered ${message.delivered_at}`;
  return `  ${message.sent_at} from ${from}${message.interrupt ? ', interrupting' : ''}: ${where}\n    ${message.text.split('\n').join('\n    ')}`;
}

/**
 * `cadre show` as text: the record, the events as a timeline, and the result. `tokenBudget` is
 * `limits.maxTokensPerRun`, shown next to the tokens when set.
 */
export function renderRunDetail(run: RunRecord, events: readonly RunEventRecord[], now: string, tokenBudget?: number): string {
  const budget = tokenBudget === undefined ? '' : ` (${totalTokens(run.usage)} of a budget of ${tokenBudget}, limits.maxTokensPerRun)`;
  const status = displayStatus(run, now);
  const lines = [
    `${run.id}  ${run.agent}  ${status}`,
    `  description: ${run.description}`,
    `  session:     ${run.parent_session_id}${run.parent_run_id ? ` (from run ${run.parent_run_id})` : ''} -> ${run.child_session_id}`,
    `  mode:        ${run.mode}${run.promoted_at ? ` (promoted ${run.promoted_at})` : ''}, depth ${run.depth}, turns ${run.turns}/${run.max_turns}`,
    `  time:        created ${run.created_at}, ${formatElapsed(run, elapsedUntil(run, now))}${run.ended_at ? `, ended ${run.ended_at}` : status === run.status ? ' so far' : `, until its lease ended at ${run.lease_expires_at}`}`,
    `  tokens:      ${run.usage.input_tokens} in, ${run.usage.output_tokens} out${budget}${cacheTokensText(run.usage)}`,
  ];
  // What the provider or the agent program said the run cost, where it said.
  if (run.usage.cost_usd !== undefined) lines.push(`  cost:        $${run.usage.cost_usd.toFixed(4)}`);
  if (status !== run.status) {
    lines.push(`  owner:       ${run.lease_owner ?? 'none'} is gone; cadre run --session ${run.parent_session_id} (or cadre serve) recovers the run`);
  }
  if (run.resumed_from) lines.push(`  resumed:     from ${run.resumed_from}`);
  if (run.forked_from) lines.push(`  forked:      from ${run.forked_from} (started with its conversation so far)`);
  if (run.worktree) lines.push(`  worktree:    ${worktreeState(run.worktree)}`);
  if (run.workflow) lines.push(`  workflow:    ${run.workflow.id}, call ${run.workflow.key} (cadre workflow show ${run.workflow.id})`);
  if (run.notification) lines.push(`  notified:    ${notificationState(run.notification)}`);
  if (run.output_schema)
    lines.push(
      `  output:      json, matching its output_schema (${Object.keys((run.output_schema.properties as object | undefined) ?? {}).join(', ') || 'an object'})`,
    );
  if (run.warnings.length > 0) lines.push(`  warnings:    ${run.warnings.map((warning) => `${warning.kind} at ${warning.at}`).join(', ')}`);
  lines.push('', 'Task:', ...run.task.split('\n').map((line) => `  ${line}`));
  if (run.context) lines.push('', 'Context:', ...run.context.split('\n').map((line) => `  ${line}`));
  if (run.messages && run.messages.length > 0) lines.push('', 'Messages:', ...run.messages.map(messageLine));
  lines.push('', 'Events:');
  const start = events[0]?.at ?? run.created_at;
  const typeWidth = Math.max(0, ...events.map((event) => event.type.length));
  for (const event of events) lines.push(`  ${seconds(start, event.at).padStart(8)}  ${event.type.padEnd(typeWidth)}  ${describeEvent(event)}`.trimEnd());
  if (run.error) lines.push('', `Error: ${run.error.kind}: ${run.error.message}`);
  if (run.result?.value !== undefined) {
    const note = run.result.truncated ? ` (the parent saw its top-level keys; ${run.result.original_length} characters)` : '';
    lines.push('', `Value (output: json)${note}:`, run.result.text);
  } else if (run.result) {
    const { summarized, summary, summary_error: summaryError } = run.result;
    if (summarized && summary) lines.push('', `Summary the parent got (${summary.length} of ${run.result.original_length} characters):`, summary);
    else if (summaryError) lines.push('', `No summary: ${summaryError}.`);
    const note = summarized
      ? ` (${run.result.original_length} characters, in full)`
      : run.result.truncated
        ? ` (the parent saw it truncated; ${run.result.original_length} characters)`
        : '';
    lines.push('', `Result${note}:`, run.result.text);
  } else if (run.partial_result) {
    lines.push('', 'Partial result:', run.partial_result);
  } else if (run.status !== 'queued' && run.status !== 'running') {
    lines.push('', 'No result.');
  }
  return lines.join('\n');
}

/** `cadre show RUN_ID`: one run in full. */
export async function showCommand(context: CliContext, runId: string, flags: StoreFlags): Promise<number> {
  const { store, config, close } = await openCliStore(context, flags);
  try {
    const run = await store.getRun(runId);
    if (!run) {
      const hint = runId.startsWith('ses_') ? ` For a session, use: cadre runs ${runId}, or cadre export ${runId}` : ' List runs with: cadre runs';
      throw new ConfigError(`No run '${runId}'.${hint}`);
    }
    const events = await store.listRunEvents(runId);
    const now = new Date().toISOString();
    if (flags.json) writeLine(context.stdout, JSON.stringify({ run: viewRun(run, now), events }, null, 2));
    else writeLine(context.stdout, renderRunDetail(run, events, now, config.limits.maxTokensPerRun));
    return 0;
  } finally {
    await close();
  }
}

/** A run's worktree in `cadre show`: its branch and changes, and what became of it. */
function worktreeState(worktree: RunWorktree): string {
  if (!worktree.commit) return `${worktree.branch} in ${worktree.path} (nothing committed yet)`;
  const state = worktree.removed_at
    ? worktree.merged_at
      ? 'merged and removed'
      : 'removed'
    : worktree.merged_at
      ? 'merged'
      : `cadre worktree diff|merge ${worktree.path.split('/').pop()}`;
  return `${worktreeLine(worktree).slice('worktree: '.length)}; ${state}`;
}

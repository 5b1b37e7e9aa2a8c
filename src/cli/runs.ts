import { formatElapsed } from '../delegation/run-views.ts';
import { ConfigError } from '../errors/config-error.ts';
import { clampActivity } from '../runs/activity.ts';
import { displayStatus, elapsedUntil, viewRun } from '../runs/run-owner.ts';
import { createTokenBudget, totalTokens } from '../runs/token-budget.ts';
import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import { parseLimit, type StoreFlags } from './command-options.ts';
import { openCliStore } from './open-runtime.ts';
import { formatTable } from './run-lines.ts';

/** Every run a session started, and the runs those started, newest first. */
export async function listSessionRuns(store: Store, sessionId: string): Promise<RunRecord[]> {
  const found: RunRecord[] = [];
  const sessions = [sessionId];
  const seen = new Set(sessions);
  while (sessions.length > 0) {
    for (const run of await store.listRuns({ parent_session_id: sessions.shift()!, order: 'newest' })) {
      found.push(run);
      if (!seen.has(run.child_session_id)) {
        seen.add(run.child_session_id);
        sessions.push(run.child_session_id);
      }
    }
  }
  return found.sort((left, right) => (left.id < right.id ? 1 : -1));
}

/**
 * One row of `cadre runs`: a run whose process died shows `running (owner gone)`, its elapsed
 * time stopped; tokens are `in/out`, with `of <budget>` when `limits.maxTokensPerRun` is set.
 */
export function runRow(run: RunRecord, now: string, tokenBudget?: number): string[] {
  return [
    run.id,
    displayStatus(run, now),
    run.agent,
    clampActivity(run.description, 40),
    formatElapsed(run, elapsedUntil(run, now)),
    `${run.usage.input_tokens}/${run.usage.output_tokens}${tokenBudget === undefined ? '' : ` of ${tokenBudget}`}`,
    clampActivity(run.last_activity ?? '', 60),
  ];
}

/** `cadre runs [SESSION_ID]`: the runs of a session, or the latest runs of all sessions. */
export async function runsCommand(context: CliContext, sessionId: string | undefined, flags: StoreFlags & { limit?: string }): Promise<number> {
  const { store, config, close } = await openCliStore(context, flags);
  try {
    let runs: RunRecord[];
    if (sessionId !== undefined) {
      if (!(await store.getSession(sessionId))) throw new ConfigError(`No session '${sessionId}'. List sessions with: cadre sessions`);
      runs = await listSessionRuns(store, sessionId);
    } else {
      runs = await store.listRuns({ order: 'newest', limit: parseLimit(flags.limit, 20) });
    }
    const now = new Date().toISOString();
    if (flags.json) {
      writeLine(
        context.stdout,
        JSON.stringify(
          runs.map((run) => viewRun(run, now)),
          null,
          2,
        ),
      );
      return 0;
    }
    if (runs.length === 0) {
      writeLine(context.stdout, '(no runs)');
      return 0;
    }
    const header = ['ID', 'STATUS', 'AGENT', 'DESCRIPTION', 'ELAPSED', 'TOKENS IN/OUT', 'ACTIVITY'];
    writeLine(
      context.stdout,
      formatTable(
        header,
        runs.map((run) => runRow(run, now, config.limits.maxTokensPerRun)),
      ),
    );
    if (sessionId !== undefined) {
      // The session's whole spend: its primary agent and every run, against its budget if any.
      const tokens = await createTokenBudget({ store, limits: config.limits }).sessionTokens(sessionId);
      const budget = tokens.budget === null ? '' : ` of a budget of ${tokens.budget}`;
      writeLine(context.stdout, `Session tokens: ${tokens.total}${budget} (primary agent ${totalTokens(tokens.agent)}, runs ${totalTokens(tokens.runs)})`);
    }
    return 0;
  } finally {
    await close();
  }
}

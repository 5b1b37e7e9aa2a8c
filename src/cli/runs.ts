import { formatElapsed } from '../delegation/run-views.ts';
import { ConfigError } from '../errors/config-error.ts';
import { clampActivity } from '../runs/activity.ts';
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

/** One row of `cadre runs`. */
export function runRow(run: RunRecord, now: string): string[] {
  return [
    run.id,
    run.status,
    run.agent,
    clampActivity(run.description, 40),
    formatElapsed(run, now),
    `${run.usage.input_tokens}/${run.usage.output_tokens}`,
    clampActivity(run.last_activity ?? '', 60),
  ];
}

/** `cadre runs [SESSION_ID]`: the runs of a session, or the latest runs of all sessions. */
export async function runsCommand(context: CliContext, sessionId: string | undefined, flags: StoreFlags & { limit?: string }): Promise<number> {
  const { store, close } = await openCliStore(context, flags);
  try {
    let runs: RunRecord[];
    if (sessionId !== undefined) {
      if (!(await store.getSession(sessionId))) throw new ConfigError(`No session '${sessionId}'. List sessions with: cadre sessions`);
      runs = await listSessionRuns(store, sessionId);
    } else {
      runs = await store.listRuns({ order: 'newest', limit: parseLimit(flags.limit, 20) });
    }
    if (flags.json) {
      writeLine(context.stdout, JSON.stringify(runs, null, 2));
      return 0;
    }
    if (runs.length === 0) {
      writeLine(context.stdout, '(no runs)');
      return 0;
    }
    const now = new Date().toISOString();
    const header = ['ID', 'STATUS', 'AGENT', 'DESCRIPTION', 'ELAPSED', 'TOKENS IN/OUT', 'ACTIVITY'];
    writeLine(context.stdout, formatTable(header, runs.map((run) => runRow(run, now))));
    return 0;
  } finally {
    await close();
  }
}

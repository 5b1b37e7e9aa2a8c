import { writeLine, type CliContext } from './cli-context.ts';
import { parseLimit, type StoreFlags } from './command-options.ts';
import { openCliStore } from './open-runtime.ts';
import { formatTable } from './run-lines.ts';
import { readSessionState } from '../server/session-views.ts';
import { sessionStateLabel } from '../sessions/session-state.ts';

/**
 * `cadre sessions`: primary sessions, newest first, with how many runs each started, and where
 * each stands as the dashboard and the API say it (`state`: awaiting an approval, waiting on runs,
 * canceled by a person...), its stored `status` kept in the JSON.
 */
export async function sessionsCommand(context: CliContext, flags: StoreFlags & { limit?: string }): Promise<number> {
  const { store, close } = await openCliStore(context, flags);
  try {
    const sessions = await store.listSessions({ primaryOnly: true, limit: parseLimit(flags.limit, 50) });
    const counted = await Promise.all(
      sessions.map(async (session) => ({
        ...session,
        state: (await readSessionState(store, session.id)) ?? { kind: session.status },
        runs: (await store.listRuns({ parent_session_id: session.id })).length,
      })),
    );
    if (flags.json) {
      writeLine(context.stdout, JSON.stringify(counted, null, 2));
      return 0;
    }
    if (counted.length === 0) {
      writeLine(context.stdout, '(no sessions yet: start one with cadre run "...")');
      return 0;
    }
    const rows = counted.map((session) => [
      session.id,
      sessionStateLabel(session.state),
      session.agent,
      session.model,
      session.created_at,
      String(session.runs),
    ]);
    writeLine(context.stdout, formatTable(['ID', 'STATE', 'AGENT', 'MODEL', 'CREATED', 'RUNS'], rows));
    return 0;
  } finally {
    await close();
  }
}

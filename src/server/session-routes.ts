import { Hono } from 'hono';
import { ConfigError } from '../errors/config-error.ts';
import { isAppSession } from '../embed/app-sessions.ts';
import type { Cadre } from '../runtime/create-cadre.ts';
import type { SessionRecord } from '../store/records.ts';
import { viewMessages } from './message-views.ts';
import { failRequest, optionalText, readJsonObject, requiredText } from './request-input.ts';
import { listSessionRuns, readSessionParts, summarizeSession, summaryOf, viewRuns } from './session-views.ts';

/** Options of {@link createSessionRoutes}. */
export interface SessionRoutesOptions {
  cadre: Cadre;
  /** Where errors of turns started in the background go. */
  onError: (error: unknown) => void;
}

/**
 * The `/api/sessions` routes: list, show, runs, create, send a message, stop.
 * Turns started here run in the background; watch them through `/api/events`.
 */
export function createSessionRoutes({ cadre, onError }: SessionRoutesOptions): Hono {
  const routes = new Hono();
  const { store } = cadre;

  async function findSession(id: string): Promise<SessionRecord> {
    const session = await store.getSession(id);
    if (!session) failRequest(404, `No session '${id}'.`);
    return session;
  }

  function startTurn(sessionId: string, text: string): void {
    cadre.send(sessionId, text).catch(onError);
  }

  routes.get('/', async (context) => {
    const limit = Number(context.req.query('limit') ?? 100);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) failRequest(400, "'limit' must be an integer from 1 to 1000.");
    const sessions = await store.listSessions({ limit, primaryOnly: true });
    return context.json({ sessions: await Promise.all(sessions.map((session) => summarizeSession(store, session))) });
  });

  routes.post('/', async (context) => {
    const body = await readJsonObject(context);
    const prompt = requiredText(body, 'prompt');
    const agent = optionalText(body, 'agent');
    let session: SessionRecord;
    try {
      session = await cadre.createSession({ agent });
    } catch (error) {
      if (ConfigError.isInstance(error)) failRequest(400, error.message);
      throw error;
    }
    startTurn(session.id, prompt);
    return context.json({ session_id: session.id }, 201);
  });

  routes.get('/:id', async (context) => {
    const session = await findSession(context.req.param('id'));
    const [parts, tokens] = await Promise.all([readSessionParts(store, session.id), cadre.sessionTokens(session.id)]);
    // What the session spent against its budgets, for the dashboard's header and cards.
    const limits = { max_tokens_per_run: cadre.limits.maxTokensPerRun ?? null, max_tokens_per_session: cadre.limits.maxTokensPerSession ?? null };
    // One summary, the sessions list's own: its `state` is what the list, the header and the API show.
    const summary = summaryOf(session, parts);
    return context.json({
      session: summary,
      messages: await viewMessages(store, session.id, parts.messages, parts.runs),
      runs: viewRuns(parts.runs),
      tokens: { ...tokens, ...limits },
    });
  });

  routes.get('/:id/runs', async (context) => {
    const session = await findSession(context.req.param('id'));
    return context.json({ runs: viewRuns(await listSessionRuns(store, session.id)) });
  });

  routes.post('/:id/messages', async (context) => {
    const session = await findSession(context.req.param('id'));
    const text = requiredText(await readJsonObject(context), 'text');
    if (session.parent_run_id !== null) {
      failRequest(409, `Session '${session.id}' is the child session of run ${session.parent_run_id}; its parent continues it.`);
    }
    if (isAppSession(session)) {
      failRequest(409, `Session '${session.id}' is driven by an app's own loop (cadre.tools); send messages through that app.`);
    }
    startTurn(session.id, text);
    return context.json({ session_id: session.id }, 202);
  });

  routes.post('/:id/stop', async (context) => {
    const session = await findSession(context.req.param('id'));
    const stopped = await cadre.stopSession(session.id);
    return context.json({ session: await findSession(session.id), runs: stopped });
  });

  return routes;
}

import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { sessionOfEvent, type CadreEvent } from '../runs/run-bus.ts';
import { movesSessionRow, type ListChanges } from './list-changes.ts';
import type { Cadre } from '../runtime/create-cadre.ts';
import type { MessageRecord } from '../store/records.ts';
import { followChanges } from './follow-changes.ts';
import { viewNewMessage } from './message-views.ts';
import { listSessionRuns, readSessionState } from './session-views.ts';
import { watchExternalVersion } from '../store/watch-external-version.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';

/** Options of {@link streamCadreEvents}. */
export interface EventStreamOptions {
  cadre: Cadre;
  /** Milliseconds between heartbeat comments that keep proxies from closing the stream. @default 15000 */
  heartbeatMs?: number;
  /**
   * Milliseconds between reads of the store's external version (see `Store.externalVersion`)
   * while a session is watched: once another process committed, a `store-changed` event tells
   * the view to read the session again. Unused for a store without it.
   * @default 250
   */
  externalChangeMs?: number;
  /** The process's changes to the sessions list, shared by every stream with `?list=1` (see {@link shareListChanges}). */
  listChanges: ListChanges;
}

/**
 * Answers `GET /api/events` with server-sent events: one SSE message per live {@link CadreEvent},
 * `event:` its type and `data:` the event as JSON. With `?session=ID`, only that session's events,
 * the events of runs nested under its runs (their child sessions join as they appear), and what
 * their subagents say: the `text-delta` and `message` events of those child sessions (a view
 * tells them apart by `session_id`). With `?session=`, a `store-changed` event (data `{}`) says
 * that another process committed to the database, whose work sends no live events here: read the
 * session again; and a `session-state` event (`{session_id, state}`) gives the session's state
 * (see `SessionState`) when the stream opens and each time it changes, the same value as the API's.
 * With `?list=1`, a `sessions-changed` event (data `{}`) says that the sessions list may have
 * changed (a session started, changed state, or another process wrote): read it again; without
 * `?session=`, such a stream sends nothing else. The subscription ends when the client goes away.
 */
export function streamCadreEvents(context: Context, { cadre, heartbeatMs = 15_000, externalChangeMs = 250, listChanges }: EventStreamOptions): Response {
  const sessionId = context.req.query('session') || null;
  const list = context.req.query('list') === '1';
  return streamSSE(context, async (stream) => {
    const family = new Set<string>(sessionId === null ? [] : [sessionId]);
    const wanted = (event: CadreEvent): boolean => {
      if (sessionId === null) return !list;
      const owner = sessionOfEvent(event);
      // A subagent's words belong to its run's card; its session's status and asks do not travel here.
      if (event.type === 'text-delta' || event.type === 'message') return family.has(owner);
      if (event.type !== 'run-event') return owner === sessionId;
      if (!family.has(owner)) return false;
      family.add(event.run.child_session_id);
      return true;
    };
    // Writes go one after another so events keep their order.
    let writing: Promise<unknown> = Promise.resolve();
    const write = (type: string, data: unknown) => {
      writing = writing.then(() => stream.writeSSE({ event: type, data: JSON.stringify(data) }));
    };
    // A message goes out as the API shows it: a notification with the runs it announces.
    const writeMessage = (message: MessageRecord) => {
      writing = writing.then(async () => {
        const view = await viewNewMessage(cadre.store, message).catch((error: unknown) => {
          reportToDefaultLogger(error);
          return { ...message, notification: null };
        });
        await stream.writeSSE({ event: 'message', data: JSON.stringify({ type: 'message', message: view }) });
      });
    };
    const state =
      sessionId === null
        ? undefined
        : followChanges(
            () => readSessionState(cadre.store, sessionId),
            (value) => {
              if (value !== null) write('session-state', { session_id: sessionId, state: value });
            },
            reportToDefaultLogger,
          );
    let closed = false;
    const listChanged = () => {
      if (list && !closed) write('sessions-changed', {});
    };
    const stopListChanges = list ? listChanges.watch(listChanged) : undefined;
    const send = (event: CadreEvent) => {
      if (!wanted(event)) return;
      if (event.type === 'message') writeMessage(event.message);
      else write(event.type, event);
      if (movesSessionRow(event)) state?.poke();
    };
    // A session's view hears only its own family's events; without a session it hears everything.
    const unsubscribe = sessionId !== null ? cadre.subscribe(send, { sessionId }) : list ? () => {} : cadre.subscribe(send);
    const heartbeat = setInterval(() => {
      writing = writing.then(() => stream.write(': heartbeat\n\n'));
    }, heartbeatMs);
    // Work of another process on the shared database (a `cadre run` in another terminal) sends no
    // live events here: its commits are seen by the store's external version instead.
    const stopExternalWatch =
      sessionId === null && !list
        ? undefined
        : watchExternalVersion(
            cadre.store,
            externalChangeMs,
            () => {
              if (sessionId !== null) write('store-changed', {});
              state?.poke();
              listChanges.poke();
            },
            reportToDefaultLogger,
          );
    const ended = new Promise<void>((resolve) => {
      const end = () => {
        if (closed) return;
        closed = true;
        clearInterval(heartbeat);
        stopListChanges?.();
        state?.stop();
        stopExternalWatch?.();
        unsubscribe();
        resolve();
      };
      stream.onAbort(end);
      context.req.raw.signal.addEventListener('abort', end, { once: true });
    });
    if (sessionId !== null) {
      for (const run of await listSessionRuns(cadre.store, sessionId)) family.add(run.child_session_id);
    }
    writing = writing.then(() => stream.write(': connected\n\n'));
    state?.poke();
    await ended;
  });
}

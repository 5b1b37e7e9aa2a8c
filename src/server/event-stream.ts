import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { CadreEvent } from '../runs/run-bus.ts';
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
  /** Milliseconds a `sessions-changed` event waits for more changes to join it: a list is read again at most this often. @default 1000 */
  listChangeMs?: number;
}

/** Run events that may move a session's state (a run queued, started or ended). */
const stateEvents: ReadonlySet<string> = new Set(['run-queued', 'run-start', 'run-end']);

/** Whether an event may change a session's state or its row in the sessions list. */
function movesState(event: CadreEvent): boolean {
  return event.type === 'session-status' || event.type === 'approval' || (event.type === 'run-event' && stateEvents.has(event.event.type));
}

/**
 * The session an event belongs to: a run's events belong to the session that started the run
 * (`run.parent_session_id`); the others name their session.
 */
export function sessionOfEvent(event: CadreEvent): string {
  switch (event.type) {
    case 'run-event':
      return event.run.parent_session_id;
    case 'message':
      return event.message.session_id;
    case 'approval':
      return event.approval.session_id;
    default:
      return event.session_id;
  }
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
export function streamCadreEvents(
  context: Context,
  { cadre, heartbeatMs = 15_000, externalChangeMs = 250, listChangeMs = 1000 }: EventStreamOptions,
): Response {
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
    let listTimer: ReturnType<typeof setTimeout> | undefined;
    let closed = false;
    const listChanged = () => {
      if (!list || closed || listTimer !== undefined) return;
      listTimer = setTimeout(() => {
        listTimer = undefined;
        write('sessions-changed', {});
      }, listChangeMs);
    };
    const send = (event: CadreEvent) => {
      const moves = movesState(event);
      if (moves) listChanged();
      if (!wanted(event)) return;
      if (event.type === 'message') writeMessage(event.message);
      else write(event.type, event);
      if (moves) state?.poke();
    };
    const unsubscribe = cadre.subscribe(send);
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
              listChanged();
            },
            reportToDefaultLogger,
          );
    const ended = new Promise<void>((resolve) => {
      const end = () => {
        if (closed) return;
        closed = true;
        clearInterval(heartbeat);
        clearTimeout(listTimer);
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

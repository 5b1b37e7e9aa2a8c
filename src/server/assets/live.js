// Live updates: one event stream for the page, and reads again when it cannot tell.

import { upsertApproval } from './approvals.js';
import { addMessage } from './conversation.js';
import { attempt, byId, field, withToken } from './dom.js';
import { formatElapsed } from './format.js';
import { addRunMessage, addRunText, applyRunEvent, toggleDetails } from './runs.js';
import { loadSession, loadSessions, showSessionState } from './sessions.js';
import { activeStatuses, state } from './state.js';
import { scheduleTimeline } from './timeline.js';

/** One stream for the page: the sessions list's changes, and the open session's events when one is open. */
export function connectEvents(sessionId) {
  state.events?.close();
  delete document.body.dataset.events;
  const query = sessionId ? `&session=${encodeURIComponent(sessionId)}` : '';
  const events = new EventSource(withToken(`/api/events?list=1${query}`));
  let opened = false;
  // Says on the page whether the stream is open (a reconnect sets it again), for tests and the curious.
  events.addEventListener('error', () => {
    document.body.dataset.events = 'reconnecting';
  });
  events.addEventListener('open', () => {
    document.body.dataset.events = 'open';
    // After a reconnect, reload what the stream may have missed.
    if (opened) {
      if (state.sessionId) reloadSession();
      reloadSessions();
    }
    opened = true;
  });
  events.addEventListener('run-event', (message) => {
    const { run, event } = JSON.parse(message.data);
    applyRunEvent(run, event);
    const details = field(state.cards.get(run.id), 'details');
    if (!details.hidden && event.type === 'run-end') attempt(() => toggleDetails(run.id, { refresh: true }));
  });
  events.addEventListener('text-delta', (message) => {
    const { session_id: sessionId, text } = JSON.parse(message.data);
    if (sessionId !== state.sessionId) return addRunText(sessionId, text);
    const streaming = byId('streaming');
    streaming.hidden = false;
    streaming.textContent += text;
  });
  events.addEventListener('message', (event) => {
    const { message } = JSON.parse(event.data);
    if (message.session_id === state.sessionId) addMessage(message);
    else addRunMessage(message);
  });
  events.addEventListener('session-status', () => reloadSession());
  events.addEventListener('session-state', (message) => {
    const { session_id: sessionId, state: sessionState } = JSON.parse(message.data);
    if (sessionId === state.sessionId) showSessionState(sessionState);
  });
  events.addEventListener('sessions-changed', () => reloadSessions());
  events.addEventListener('approval', (message) => upsertApproval(JSON.parse(message.data).approval));
  // Another process (a `cadre run` in another terminal) wrote to the database: its work has no live events here.
  events.addEventListener('store-changed', () => reloadSession());
  for (const type of ['run-event', 'text-delta', 'message', 'session-status', 'session-state', 'approval', 'store-changed']) {
    events.addEventListener(type, () => {
      state.lastEventAt = Date.now();
    });
  }
  state.events = events;
}

/** `read` made safe to call often: one read at a time, and a call during a read gets one more read after it. */
export function oneAtATime(read) {
  let reading = null;
  let again = false;
  return function readAgain() {
    if (reading) {
      again = true;
      return;
    }
    reading = attempt(read).finally(() => {
      reading = null;
      if (again) {
        again = false;
        readAgain();
      }
    });
  };
}

/** Reads the open session again. */
export const reloadSession = oneAtATime(loadSession);
/** Reads the sessions list again. */
export const reloadSessions = oneAtATime(loadSessions);

// Runs executed by another process (`cadre run` in another terminal) send no live events here: the
// server says `store-changed` when it sees their commits (SQLite); without that (Postgres), while
// the open session is busy and the stream is quiet, look again now and then.
setInterval(() => {
  const busy = state.sessionState !== null && !['idle', 'failed', 'canceled'].includes(state.sessionState.kind);
  if (state.sessionId && busy && Date.now() - state.lastEventAt > 3000) attempt(loadSession);
}, 3000);

setInterval(() => {
  let active = false;
  for (const run of state.runs.values()) {
    if (!activeStatuses.has(run.status)) continue;
    active = true;
    field(state.cards.get(run.id), 'elapsed').textContent = formatElapsed(run);
  }
  if (active) scheduleTimeline();
}, 1000);

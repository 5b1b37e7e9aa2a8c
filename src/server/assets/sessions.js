// The sessions list and the open session: its header, state and spend.

import { showApprovals } from './approvals.js';
import { messageItem } from './conversation.js';
import { api, attempt, byId, element, withToken } from './dom.js';
import { costText, formatTime, formatTokens, stateText, totalTokens } from './format.js';
import { connectEvents } from './live.js';
import { upsertRun } from './runs.js';
import { state } from './state.js';

/** A card's token line, with `limits.maxTokensPerRun` when the session has one. */
export function runTokensText(run) {
  const budget = state.tokens?.max_tokens_per_run;
  return `${formatTokens(run.usage)} tokens${budget ? ` (${totalTokens(run.usage)} of ${budget})` : ''}${costText(run.usage)}`;
}

/** The session's spend: its primary agent (as last loaded) and its runs (live), against its budget. */
export function showSessionTokens() {
  const node = byId('session-tokens');
  if (!state.tokens) {
    node.textContent = '';
    return;
  }
  let runs = 0;
  for (const run of state.runs.values()) runs += totalTokens(run.usage);
  const total = totalTokens(state.tokens.agent) + runs;
  const budget = state.tokens.max_tokens_per_session;
  node.textContent = budget ? `${total} of ${budget} tokens${total >= budget ? ' (budget spent)' : ''}` : `${total} tokens`;
  node.classList.toggle('spent', Boolean(budget) && total >= budget);
}

export function setStateBadge(node, sessionState) {
  node.className = `badge state-${sessionState?.kind ?? 'idle'}`;
  node.textContent = stateText(sessionState);
}

export async function loadSessions() {
  const { sessions } = await api('/api/sessions');
  byId('session-rows').replaceChildren(...sessions.map(sessionItem));
  byId('no-sessions').hidden = sessions.length > 0;
}

export function sessionItem(session) {
  const item = element('li', `session-item${session.id === state.sessionId ? ' selected' : ''}`);
  item.dataset.sessionId = session.id;
  item.tabIndex = 0;
  const head = element('div', 'session-line');
  const stateBadge = element('span');
  setStateBadge(stateBadge, session.state);
  head.append(element('span', 'session-name', session.title ?? '(no prompt yet)'), stateBadge);
  const tokens = session.usage.input_tokens + session.agent_usage.input_tokens + session.usage.output_tokens + session.agent_usage.output_tokens;
  const runs = Object.values(session.run_counts).reduce((sum, count) => sum + count, 0);
  const meta = element('div', 'session-meta muted');
  meta.append(
    element('span', '', session.agent),
    element('span', '', formatTime(session.created_at)),
    element('span', '', `${runs} run${runs === 1 ? '' : 's'}`),
    element('span', '', `${tokens} tokens`),
    element('span', 'mono', session.id),
  );
  item.append(head, meta);
  const open = () => attempt(() => openSession(session.id, { reveal: true }));
  item.addEventListener('click', open);
  item.addEventListener('keydown', (key) => {
    if (key.key === 'Enter') open();
  });
  return item;
}

// The open session: conversation and runs.

/**
 * Shows a session. With `reveal`, a page in one column (a phone) scrolls to it: the list sits
 * above it there, and a tap that opened it far below would seem to do nothing.
 */
export async function openSession(id, { reveal = false } = {}) {
  state.sessionId = id;
  state.runs.clear();
  state.cards.clear();
  state.tokens = null;
  state.sessionState = null;
  showSessionTokens();
  state.approvals.clear();
  byId('run-cards').replaceChildren();
  byId('approval-cards').replaceChildren();
  byId('approvals').hidden = true;
  history.replaceState(null, '', `${location.pathname}${location.search}#${id}`);
  byId('session-view').hidden = false;
  byId('session-title').textContent = '';
  byId('session-id').textContent = id;
  byId('timeline').replaceChildren();
  byId('timeline-panel').hidden = true;
  byId('export-json').href = withToken(`/api/sessions/${id}/export?format=json`);
  byId('export-markdown').href = withToken(`/api/sessions/${id}/export?format=markdown`);
  connectEvents(id);
  await Promise.all([loadSession(), loadSessions()]);
  // Once filled: an empty view may leave the page too short to scroll it to the top.
  if (reveal && id === state.sessionId && matchMedia('(max-width: 900px)').matches) byId('session-view').scrollIntoView({ block: 'start' });
}

export async function loadSession() {
  const id = state.sessionId;
  const [{ session, messages, runs, tokens }, { approvals }] = await Promise.all([
    api(`/api/sessions/${id}`),
    api(`/api/approvals?session=${encodeURIComponent(id)}`),
  ]);
  if (id !== state.sessionId) return;
  state.tokens = tokens;
  byId('session-title').textContent = session.title ?? '(no prompt yet)';
  showSessionState(session.state);
  byId('messages').replaceChildren(...messages.map(messageItem));
  byId('streaming').hidden = true;
  byId('streaming').textContent = '';
  for (const run of runs) upsertRun(run);
  showSessionTokens();
  showApprovals(approvals);
}

/** The open session's state as the server computed it (`/api/sessions/:id`, `session-state` events): header and list row alike. */
export function showSessionState(sessionState) {
  state.sessionState = sessionState;
  setStateBadge(byId('session-state'), sessionState);
  const row = document.querySelector(`.session-item[data-session-id="${CSS.escape(state.sessionId)}"] .badge`);
  if (row) setStateBadge(row, sessionState);
}

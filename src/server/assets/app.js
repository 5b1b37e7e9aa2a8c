// The cadre dashboard: plain script, no framework, no build step.
// Model output reaches the page only through textContent, never as HTML.

const token = new URLSearchParams(location.search).get('token');
const activeStatuses = new Set(['queued', 'running']);
const state = { sessionId: null, sessionStatus: null, runs: new Map(), cards: new Map(), approvals: new Map(), events: null, lastEventAt: 0, tokens: null, agentColors: new Map() };

const byId = (id) => document.getElementById(id);

/** A path with the access token in its query, for links and EventSource (they cannot send headers). */
function withToken(path) {
  if (!token) return path;
  const url = new URL(path, location.origin);
  url.searchParams.set('token', token);
  return url.pathname + url.search;
}

async function api(path, { method = 'GET', body } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function notice(text) {
  byId('notice').textContent = text;
}

function attempt(work) {
  return Promise.resolve().then(work).catch((error) => notice(error.message));
}

/** Colours a node with its agent's colour (the agent file's `color`, from /api/agents as #rrggbb). */
function paintAgent(node, agent) {
  const color = state.agentColors.get(agent);
  if (!color) return node;
  node.style.setProperty('--agent-color', color);
  node.classList.add('agent-colored');
  return node;
}

async function loadAgentColors() {
  const { agents } = await api('/api/agents');
  for (const agent of agents) if (agent.color) state.agentColors.set(agent.name, agent.color);
}

function badge(status) {
  return element('span', `badge status-${status}`, status);
}

function setBadge(node, status) {
  node.className = `badge status-${status}`;
  node.textContent = status;
}

function formatTokens(usage) {
  return `${usage.input_tokens} in / ${usage.output_tokens} out`;
}

function totalTokens(usage) {
  return usage.input_tokens + usage.output_tokens;
}

/** `running (owner gone)` for a run whose process died (the stored status stays until recovery). */
function runStatusText(run) {
  return run.owner_gone ? `${run.status} (owner gone)` : run.status;
}

/** A card's token line, with `limits.maxTokensPerRun` when the session has one. */
function runTokensText(run) {
  const budget = state.tokens?.max_tokens_per_run;
  return `${formatTokens(run.usage)} tokens${budget ? ` (${totalTokens(run.usage)} of ${budget})` : ''}`;
}

/** The session's spend: its primary agent (as last loaded) and its runs (live), against its budget. */
function showSessionTokens() {
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

function formatTime(iso) {
  return new Date(iso).toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
}

/** A tool call on one line; delegations read as `agent general: description`. */
function formatToolCall(part) {
  const input = part.input ?? {};
  if (typeof input.agent === 'string') {
    const mode = input.run_in_background ? ' (background)' : '';
    return `→ ${part.toolName} ${input.agent}: ${shorten(input.description || input.task, 80)}${mode}`;
  }
  return `→ ${part.toolName} ${shorten(input)}`;
}

function formatElapsed(run) {
  const start = Date.parse(run.started_at || run.created_at);
  // A run whose owner is gone stops at the end of its last lease rather than growing.
  const stopped = run.owner_gone && run.lease_expires_at ? Math.min(Date.parse(run.lease_expires_at), Date.now()) : Date.now();
  const end = run.ended_at ? Date.parse(run.ended_at) : stopped;
  const seconds = Math.max(0, Math.round((end - start) / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

function shorten(value, length = 120) {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
}

// Sessions list.

/** A session's state (`/api/sessions`: kind plus fields) as a person reads it. */
function stateText(sessionState) {
  switch (sessionState?.kind) {
    case 'awaiting_approval': return sessionState.approvals > 1 ? `awaiting approval (${sessionState.approvals})` : 'awaiting approval';
    case 'waiting_on_runs': return `waiting on ${sessionState.runs} run${sessionState.runs === 1 ? '' : 's'}`;
    case undefined: return '';
    default: return sessionState.kind;
  }
}

function setStateBadge(node, sessionState) {
  node.className = `badge state-${sessionState?.kind ?? 'idle'}`;
  node.textContent = stateText(sessionState);
}

async function loadSessions() {
  const { sessions } = await api('/api/sessions');
  byId('session-rows').replaceChildren(...sessions.map(sessionItem));
  byId('no-sessions').hidden = sessions.length > 0;
}

function sessionItem(session) {
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
  meta.append(element('span', '', session.agent), element('span', '', formatTime(session.created_at)),
    element('span', '', `${runs} run${runs === 1 ? '' : 's'}`), element('span', '', `${tokens} tokens`), element('span', 'mono', session.id));
  item.append(head, meta);
  const open = () => attempt(() => openSession(session.id));
  item.addEventListener('click', open);
  item.addEventListener('keydown', (key) => { if (key.key === 'Enter') open(); });
  return item;
}

// The open session: conversation and runs.

async function openSession(id) {
  state.sessionId = id;
  state.runs.clear();
  state.cards.clear();
  state.tokens = null;
  state.sessionStatus = null;
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
}

async function loadSession() {
  const id = state.sessionId;
  const [{ session, title, state: sessionState, messages, runs, tokens }, { approvals }] = await Promise.all([
    api(`/api/sessions/${id}`),
    api(`/api/approvals?session=${encodeURIComponent(id)}`),
  ]);
  if (id !== state.sessionId) return;
  state.tokens = tokens;
  byId('session-title').textContent = title ?? '(no prompt yet)';
  setStateBadge(byId('session-state'), sessionState);
  showSessionStatus(session.status);
  byId('messages').replaceChildren(...messages.map(messageItem));
  byId('streaming').hidden = true;
  byId('streaming').textContent = '';
  for (const run of runs) upsertRun(run);
  showSessionTokens();
  showApprovals(approvals);
}

function showSessionStatus(status) {
  state.sessionStatus = status;
  setBadge(byId('session-status'), status);
  showSessionState();
}

/** The open session's state from what the page holds, kept live between loads (the server's rule: asks, turn, runs). */
function showSessionState() {
  if (!state.sessionStatus) return;
  const approvals = state.approvals.size;
  const working = [...state.runs.values()].filter((run) => activeStatuses.has(run.status) && !run.owner_gone).length;
  let sessionState = { kind: 'idle' };
  if (approvals > 0) sessionState = { kind: 'awaiting_approval', approvals };
  else if (state.sessionStatus === 'running') sessionState = { kind: 'running' };
  else if (working > 0) sessionState = { kind: 'waiting_on_runs', runs: working };
  else if (state.sessionStatus === 'failed' || state.sessionStatus === 'canceled') sessionState = { kind: state.sessionStatus };
  setStateBadge(byId('session-state'), sessionState);
}

/** The runs a `<subagent-notification>` message announces (CONTRACT section 6), or null for any other text. */
function parseNotification(text) {
  const match = /^<subagent-notification>\n([\s\S]*?)\n<\/subagent-notification>\s*$/.exec(text.trim());
  if (!match) return null;
  const runs = [];
  for (const block of match[1].split(/\n\n+/)) {
    const fields = {};
    for (const line of block.split('\n')) {
      const field = /^(run_id|agent|status|description|summary): ?(.*)$/.exec(line);
      if (field) fields[field[1]] = field[2];
    }
    if (fields.run_id) runs.push(fields);
  }
  return runs.length > 0 ? runs : null;
}

/** A notification as a card: one row per finished run, its status, agent, description and the start of its result. */
function notificationItem(message, runs) {
  const item = element('li', 'message notification-card');
  item.dataset.seq = message.seq;
  item.append(element('span', 'role', runs.length === 1 ? 'subagent finished' : `${runs.length} subagents finished`));
  for (const run of runs) {
    const row = element('div', 'notification-run');
    const head = element('div', 'notification-head');
    head.append(badge(run.status ?? 'completed'), paintAgent(element('strong', '', run.agent ?? ''), run.agent), element('span', 'description', run.description ?? ''));
    const link = element('a', 'mono muted', run.run_id);
    link.href = '#';
    link.addEventListener('click', (click) => {
      click.preventDefault();
      state.cards.get(run.run_id)?.scrollIntoView({ behavior: 'smooth', block: 'center' });
    });
    row.append(head, element('div', 'text', run.summary ?? ''), link);
    item.append(row);
  }
  return item;
}

function messageText(message) {
  if (typeof message.content === 'string') return message.content;
  if (!Array.isArray(message.content)) return '';
  return message.content.filter((part) => part.type === 'text').map((part) => part.text).join('');
}

function messageItem(message) {
  if (message.role === 'user') {
    const runs = parseNotification(messageText(message));
    if (runs) return notificationItem(message, runs);
  }
  const item = element('li', `message ${message.role}`);
  item.dataset.seq = message.seq;
  item.append(element('span', 'role', message.role));
  const parts = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  for (const part of Array.isArray(parts) ? parts : []) {
    if (part.type === 'text' || part.type === 'reasoning') item.append(element('div', 'text', part.text));
    else if (part.type === 'tool-call') item.append(element('div', 'tool', formatToolCall(part)));
    else if (part.type === 'tool-result') item.append(element('div', 'tool', `← ${part.toolName}: ${shorten(part.output?.value ?? part.output)}`));
    else item.append(element('div', 'tool', part.type));
  }
  return item;
}

function addMessage(message) {
  const list = byId('messages');
  if (list.querySelector(`[data-seq="${Number(message.seq)}"]`)) return;
  list.append(messageItem(message));
  if (message.role === 'assistant') {
    byId('streaming').hidden = true;
    byId('streaming').textContent = '';
  }
}

function field(card, name) {
  return card.querySelector(`[data-field="${name}"]`);
}

function upsertRun(run) {
  state.runs.set(run.id, run);
  let card = state.cards.get(run.id);
  if (!card) {
    card = byId('run-card-template').content.firstElementChild.cloneNode(true);
    card.dataset.runId = run.id;
    card.querySelector('[data-action="stop"]').addEventListener('click', () => attempt(() => stopRun(run.id)));
    card.querySelector('[data-action="details"]').addEventListener('click', () => attempt(() => toggleDetails(run.id)));
    state.cards.set(run.id, card);
    const parent = run.parent_run_id && state.cards.get(run.parent_run_id);
    (parent ? field(parent, 'children') : byId('run-cards')).append(card);
    // An ask that arrived before its run's card waits in the session's list: it belongs on the card.
    for (const [id, ask] of state.approvals) if (ask.dataset.runId === run.id) placeApproval(id, ask);
  }
  card.dataset.status = run.status;
  setBadge(field(card, 'status'), run.status);
  field(card, 'status').textContent = runStatusText(run);
  paintAgent(field(card, 'agent'), run.agent).textContent = run.agent;
  field(card, 'description').textContent = run.description;
  field(card, 'id').textContent = run.id;
  field(card, 'id').title = `cadre stop ${run.id}`;
  field(card, 'elapsed').textContent = formatElapsed(run);
  field(card, 'usage').textContent = runTokensText(run);
  field(card, 'activity').textContent = run.last_activity || '';
  if (!activeStatuses.has(run.status)) clearRunText(card);
  card.querySelector('[data-action="stop"]').hidden = !activeStatuses.has(run.status);
  byId('no-runs').hidden = state.cards.size > 0;
  if (state.tokens) showSessionTokens();
  showSessionState();
  scheduleTimeline();
}

// The timeline: one bar per run from queued to started to ended, nested under the run that started it.

let timelineFrame = 0;

function scheduleTimeline() {
  if (timelineFrame) return;
  timelineFrame = requestAnimationFrame(() => {
    timelineFrame = 0;
    renderTimeline();
  });
}

/** Runs in the order of their cards: each after the run that started it, oldest first. */
function runsInTreeOrder() {
  const children = new Map();
  for (const run of state.runs.values()) {
    const parent = run.parent_run_id && state.runs.has(run.parent_run_id) ? run.parent_run_id : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(run);
  }
  const ordered = [];
  const visit = (parent, depth) => {
    for (const run of (children.get(parent) ?? []).sort((left, right) => (left.id < right.id ? -1 : 1))) {
      ordered.push({ run, depth });
      visit(run.id, depth + 1);
    }
  };
  visit(null, 0);
  return ordered;
}

/** Where a run's time ends on the timeline: its end, the end of its last lease when its process died, or now. */
function runEnd(run, now) {
  if (run.ended_at) return Date.parse(run.ended_at);
  if (run.owner_gone && run.lease_expires_at) return Math.min(Date.parse(run.lease_expires_at), now);
  return now;
}

function statusGroup(status) {
  if (status.startsWith('canceled')) return 'canceled';
  if (status === 'abandoned') return 'failed';
  return status;
}

function renderTimeline() {
  const rows = runsInTreeOrder();
  byId('timeline-panel').hidden = rows.length === 0;
  if (rows.length === 0) return;
  const now = Date.now();
  const start = Math.min(...rows.map(({ run }) => Date.parse(run.created_at)));
  const end = Math.max(start + 1000, ...rows.map(({ run }) => runEnd(run, now)));
  const span = end - start;
  const percent = (time) => `${(((time - start) / span) * 100).toFixed(2)}%`;
  const width = (from, to) => `${Math.max(0.4, ((to - from) / span) * 100).toFixed(2)}%`;
  byId('timeline').replaceChildren(...rows.map(({ run, depth }) => {
    const row = element('div', 'timeline-row');
    row.setAttribute('role', 'listitem');
    row.dataset.runId = run.id;
    row.dataset.status = run.status;
    const label = element('div', 'timeline-label');
    label.style.paddingLeft = `${depth * 14}px`;
    label.append(paintAgent(element('strong', '', run.agent), run.agent), element('span', 'muted', ` ${shorten(run.description, 40)}`));
    const track = element('div', 'timeline-track');
    const created = Date.parse(run.created_at);
    const started = run.started_at ? Date.parse(run.started_at) : null;
    const finish = runEnd(run, now);
    if (started === null || started > created) {
      const queued = element('span', 'timeline-bar queued');
      queued.style.left = percent(created);
      queued.style.width = width(created, started ?? finish);
      queued.title = `${run.agent}: waited for a slot ${formatSeconds((started ?? finish) - created)}`;
      track.append(queued);
    }
    if (started !== null) {
      const ran = element('span', `timeline-bar ${statusGroup(run.status)}`);
      ran.style.left = percent(started);
      ran.style.width = width(started, finish);
      ran.title = `${run.agent}: ${run.status}, ran ${formatSeconds(finish - started)}`;
      track.append(ran);
    }
    row.append(label, track);
    row.addEventListener('click', () => state.cards.get(run.id)?.scrollIntoView({ behavior: 'smooth', block: 'center' }));
    return row;
  }));
  byId('timeline-axis').textContent = `0s … ${formatSeconds(span)}`;
}

function formatSeconds(milliseconds) {
  const seconds = Math.max(0, Math.round(milliseconds / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

// Events whose run record comes fresh from the store. The frequent ones (step-start, tool-call-start,
// tool-call-end, activity) carry the run as its process sees it while it works (turns, tokens,
// activity so far): they may update a working card, never take a finished one back.
const freshRecordEvents = new Set(['run-queued', 'run-start', 'run-end', 'warning', 'result-consume', 'notification-deliver']);

function applyRunEvent(run, event) {
  const known = state.runs.get(run.id);
  if (!known || freshRecordEvents.has(event.type)) return upsertRun(run);
  if (!activeStatuses.has(known.status)) return;
  const text = event.type === 'activity' ? event.data?.text : event.type === 'tool-call-start' ? event.data?.label : undefined;
  upsertRun({ ...known, turns: run.turns, usage: run.usage, last_activity: typeof text === 'string' ? text : known.last_activity });
}

async function stopRun(id) {
  const { run } = await api(`/api/runs/${id}/stop`, { method: 'POST', body: {} });
  upsertRun(run);
}

// What a run's subagent says, live: its streamed text on the card, its messages in the open details.

/** Characters of a subagent's streamed text a card shows: the end of what it is writing. */
const liveTextChars = 600;

/** The run whose subagent works in `sessionId` (its child session), if the page shows it. */
function runOfChildSession(sessionId) {
  for (const run of state.runs.values()) if (run.child_session_id === sessionId) return run;
  return undefined;
}

function addRunText(sessionId, text) {
  const run = runOfChildSession(sessionId);
  const card = run && state.cards.get(run.id);
  if (!card || !activeStatuses.has(run.status)) return;
  const live = field(card, 'live');
  live.hidden = false;
  live.textContent = (live.textContent + text).slice(-liveTextChars);
}

function addRunMessage(message) {
  const run = runOfChildSession(message.session_id);
  const card = run && state.cards.get(run.id);
  if (!card) return;
  // The streamed text is now a stored message: the transcript holds it.
  if (message.role === 'assistant') clearRunText(card);
  const transcript = field(field(card, 'details'), 'transcript');
  if (transcript && !transcript.querySelector(`[data-seq="${Number(message.seq)}"]`)) transcript.append(messageItem(message));
}

function clearRunText(card) {
  const live = field(card, 'live');
  live.hidden = true;
  live.textContent = '';
}

async function toggleDetails(id, { refresh = false } = {}) {
  const details = field(state.cards.get(id), 'details');
  if (!details.hidden && !refresh) {
    details.hidden = true;
    return;
  }
  const [{ run, events }, { messages }] = await Promise.all([api(`/api/runs/${id}`), api(`/api/runs/${id}/transcript`)]);
  const outcome = run.error ? `${run.error.kind}: ${run.error.message}` : run.result?.text ?? run.partial_result ?? '(no result yet)';
  const transcript = element('ol', 'messages');
  transcript.dataset.field = 'transcript';
  transcript.append(...messages.map(messageItem));
  const eventList = element('ol', 'events');
  eventList.append(...events.map((event) => element('li', 'mono', `${event.seq} ${event.at.slice(11, 19)} ${event.type} ${shorten(event.data, 80)}`)));
  const summary = run.result?.summarized && run.result.summary ? [element('h4', '', `Summary the parent got (of ${run.result.original_length} characters)`), element('div', 'text', run.result.summary)] : [];
  details.replaceChildren(...summary, element('h4', '', 'Result'), element('div', 'text', outcome), element('h4', '', 'Transcript'), transcript,
    element('h4', '', 'Events'), eventList);
  details.hidden = false;
}

// Asks for approval of the open session: one card each, answered with Approve, Deny or Always.

function showApprovals(pending) {
  const ids = new Set(pending.map((approval) => approval.id));
  for (const id of [...state.approvals.keys()]) if (!ids.has(id)) removeApproval(id);
  for (const approval of pending) upsertApproval(approval);
}

function upsertApproval(approval) {
  if (approval.status !== 'pending') {
    removeApproval(approval.id);
    return;
  }
  // The run's stored activity line may lag behind the ask (it is written at most 4 times a second).
  const run = approval.run_id && state.runs.get(approval.run_id);
  if (run && activeStatuses.has(run.status)) upsertRun({ ...run, last_activity: shorten(`awaiting approval: ${approval.summary}`, 80) });
  if (state.approvals.has(approval.id)) return;
  const card = byId('approval-card-template').content.firstElementChild.cloneNode(true);
  card.dataset.approvalId = approval.id;
  field(card, 'agent').textContent = approval.agent;
  field(card, 'run').textContent = approval.run_id ?? '(primary agent)';
  field(card, 'summary').textContent = approval.argument === null ? approval.tool : `${approval.tool} ${approval.argument}`;
  const preview = approvalPreview(approval.preview);
  if (preview) field(card, 'summary').after(preview);
  field(card, 'id').textContent = approval.id;
  field(card, 'waiting').textContent = `waiting since ${formatTime(approval.created_at)}`;
  const answer = (decision, always) => attempt(async () => {
    for (const button of card.querySelectorAll('button')) button.disabled = true;
    try {
      await api(`/api/approvals/${approval.id}`, { method: 'POST', body: { decision, always } });
    } finally {
      removeApproval(approval.id);
    }
  });
  card.querySelector('[data-action="approve"]').addEventListener('click', () => answer('approve', false));
  card.querySelector('[data-action="deny"]').addEventListener('click', () => answer('deny', false));
  card.querySelector('[data-action="always"]').addEventListener('click', () => answer('approve', true));
  if (approval.run_id) card.dataset.runId = approval.run_id;
  state.approvals.set(approval.id, card);
  placeApproval(approval.id, card);
  showSessionState();
}

/**
 * What an ask would do, as the server computed it (`approval.preview`): a unified diff, its
 * added, removed and hunk lines marked, or a command in full. Null when the ask has none.
 */
function approvalPreview(preview) {
  if (!preview) return null;
  const block = document.createElement('pre');
  block.className = `approval-preview approval-preview-${preview.kind}`;
  if (preview.kind === 'command') {
    block.textContent = `$ ${preview.command}`;
    return block;
  }
  block.title = preview.path;
  for (const line of preview.diff.split('\n')) {
    const row = document.createElement('span');
    const kind = /^(---|\+\+\+) /.test(line) ? 'file' : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('... ') ? 'more' : 'same';
    row.className = `diff-${kind}`;
    row.textContent = `${line}\n`;
    block.append(row);
  }
  return block;
}

/** An ask sits on its run's card; the primary agent's asks (and asks of runs not shown yet) above the runs. */
function placeApproval(id, card) {
  const runCard = card.dataset.runId && state.cards.get(card.dataset.runId);
  if (runCard) field(runCard, 'ask').append(card);
  else byId('approval-cards').append(card);
  byId('approvals').hidden = byId('approval-cards').childElementCount === 0;
}

function removeApproval(id) {
  state.approvals.get(id)?.remove();
  state.approvals.delete(id);
  byId('approvals').hidden = byId('approval-cards').childElementCount === 0;
  showSessionState();
}

// Live updates.

function connectEvents(sessionId) {
  state.events?.close();
  const events = new EventSource(withToken(`/api/events?session=${encodeURIComponent(sessionId)}`));
  let opened = false;
  events.addEventListener('open', () => {
    // After a reconnect, reload what the stream may have missed.
    if (opened) attempt(loadSession);
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
  events.addEventListener('session-status', (message) => {
    showSessionStatus(JSON.parse(message.data).status);
    attempt(() => Promise.all([loadSession(), loadSessions()]));
  });
  events.addEventListener('approval', (message) => upsertApproval(JSON.parse(message.data).approval));
  // Another process (a `cadre run` in another terminal) wrote to the database: its work has no live events here.
  events.addEventListener('store-changed', () => reloadSession());
  for (const type of ['run-event', 'text-delta', 'message', 'session-status', 'approval', 'store-changed']) {
    events.addEventListener(type, () => { state.lastEventAt = Date.now(); });
  }
  state.events = events;
}

/** Reads the open session again, one read at a time: a change seen during a read gets one more. */
let reloading = null;
let reloadAgain = false;
function reloadSession() {
  if (reloading) {
    reloadAgain = true;
    return;
  }
  reloading = attempt(loadSession).finally(() => {
    reloading = null;
    if (reloadAgain) {
      reloadAgain = false;
      reloadSession();
    }
  });
}

// Runs executed by another process (`cadre run` in another terminal) send no live events here: the
// server says `store-changed` when it sees their commits (SQLite); without that (Postgres), while
// the open session is busy and the stream is quiet, look again now and then.
setInterval(() => {
  const busy = state.sessionStatus === 'running' || [...state.runs.values()].some((run) => activeStatuses.has(run.status));
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

// Forms and buttons.

byId('new-session').addEventListener('submit', (submit) => {
  submit.preventDefault();
  const form = submit.currentTarget;
  const prompt = form.elements.prompt.value;
  const agent = form.elements.agent.value.trim() || undefined;
  attempt(async () => {
    const { session_id } = await api('/api/sessions', { method: 'POST', body: { prompt, agent } });
    form.reset();
    notice('');
    await openSession(session_id);
  });
});

byId('follow-up').addEventListener('submit', (submit) => {
  submit.preventDefault();
  const form = submit.currentTarget;
  const text = form.elements.text.value;
  attempt(async () => {
    await api(`/api/sessions/${state.sessionId}/messages`, { method: 'POST', body: { text } });
    form.reset();
  });
});

byId('stop-session').addEventListener('click', () => attempt(async () => {
  const { runs } = await api(`/api/sessions/${state.sessionId}/stop`, { method: 'POST', body: {} });
  for (const run of runs) upsertRun(run);
}));

/** How bash is confined in this server's runtime: the same box for every run of every agent. */
async function showSandbox() {
  const { sandbox, workspace } = await api('/api/sandbox');
  showWorkspaceTrust(workspace);
  const node = byId('sandbox');
  if (!sandbox) return;
  node.classList.toggle('unconfined', !sandbox.confined);
  node.textContent = sandbox.confined
    ? `bash runs in ${sandbox.kind}: writes only in ${sandbox.writable.join(', ')}; network ${sandbox.network ? 'on' : 'off'}`
    : sandbox.mode === 'required'
      ? `No OS sandbox (${sandbox.reason}): bash is refused (sandbox.mode required)`
      : `No OS sandbox (${sandbox.reason}): bash commands run unconfined`;
}

/** Whether the workspace's own configuration is trusted (cadre trust), and what was left out when not. */
function showWorkspaceTrust(workspace) {
  const node = byId('workspace-trust');
  if (!workspace || workspace.state === 'none') return;
  const left = workspace.leftOut.join(', ');
  node.classList.toggle('unconfined', workspace.leftOut.length > 0);
  node.textContent = workspace.state === 'trusted' ? 'Workspace configuration: trusted'
    : workspace.state === 'once' ? 'Workspace configuration: trusted for this server only (--trust)'
    : `Workspace configuration ${workspace.state === 'changed' ? 'changed since trusted' : 'not trusted'}: left out ${left} (review it and run cadre trust)`;
}

setInterval(() => attempt(loadSessions), 10_000);
attempt(showSandbox);
attempt(async () => {
  // Colours are a nicety: a failure to load them leaves the runs uncoloured, nothing else.
  await loadAgentColors().catch(() => {});
  await loadSessions();
  if (location.hash.length > 1) await openSession(decodeURIComponent(location.hash.slice(1)));
});

// Run cards: live updates, a subagent's streamed text, details, stop, a person's message.

import { messageItem } from './conversation.js';
import { api, attempt, byId, element, field, setBadge } from './dom.js';
import { formatElapsed, runStatusText, shorten } from './format.js';
import { runTokensText, showSessionTokens } from './sessions.js';
import { activeStatuses, paintAgent, state } from './state.js';
import { scheduleTimeline } from './timeline.js';
import { refreshWorkflow, workflowGroupFor } from './workflows.js';

export function upsertRun(run) {
  state.runs.set(run.id, run);
  let card = state.cards.get(run.id);
  if (!card) {
    card = byId('run-card-template').content.firstElementChild.cloneNode(true);
    card.dataset.runId = run.id;
    card.querySelector('[data-action="stop"]').addEventListener('click', () => attempt(() => stopRun(run.id)));
    card.querySelector('[data-action="details"]').addEventListener('click', () => attempt(() => toggleDetails(run.id)));
    card.querySelector('[data-action="changes"]').addEventListener('click', () => attempt(() => toggleChanges(run.id)));
    field(card, 'send').addEventListener('submit', (event) => {
      event.preventDefault();
      attempt(() => sendToRun(run.id));
    });
    state.cards.set(run.id, card);
    const parent = run.parent_run_id && state.cards.get(run.parent_run_id);
    (parent ? field(parent, 'children') : (workflowGroupFor(run) ?? byId('run-cards'))).append(card);
  } else if (run.workflow && card.dataset.status !== run.status) refreshWorkflow(run.workflow.id);
  card.dataset.status = run.status;
  setBadge(field(card, 'status'), run.status);
  field(card, 'status').textContent = runStatusText(run);
  paintAgent(field(card, 'agent'), run.agent).textContent = run.harness ? `${run.agent} (${harnessLabels[run.harness.name] ?? run.harness.name})` : run.agent;
  field(card, 'description').textContent = run.forked_from ? `${run.description} (forked from ${run.forked_from})` : run.description;
  field(card, 'id').textContent = run.id;
  field(card, 'id').title = `cadre stop ${run.id}`;
  field(card, 'elapsed').textContent = formatElapsed(run);
  field(card, 'usage').textContent = runTokensText(run);
  field(card, 'activity').textContent = run.last_activity || '';
  if (!activeStatuses.has(run.status)) clearRunText(card);
  card.querySelector('[data-action="stop"]').hidden = !activeStatuses.has(run.status);
  showWorktree(card, run.worktree);
  // The box is on a running run's card: a queued one takes a message too, into its task.
  field(card, 'send').hidden = !activeStatuses.has(run.status);
  byId('no-runs').hidden = state.cards.size > 0;
  if (state.tokens) showSessionTokens();
  scheduleTimeline();
}

/** The agent programs a run may be carried out by (docs/harnesses.md), as people call them. */
const harnessLabels = { 'claude-code': 'Claude Code', codex: 'Codex', opencode: 'opencode' };

// Events whose run record comes fresh from the store. The frequent ones (step-start, tool-call-start,
// tool-call-end, activity) carry the run as its process sees it while it works (turns, tokens,
// activity so far): they may update a working card, never take a finished one back.
export const freshRecordEvents = new Set(['run-queued', 'run-start', 'run-end', 'warning', 'result-consume', 'notification-deliver']);

export function applyRunEvent(run, event) {
  const known = state.runs.get(run.id);
  if (!known || freshRecordEvents.has(event.type)) return upsertRun(run);
  if (!activeStatuses.has(known.status)) return;
  const text = event.type === 'activity' ? event.data?.text : event.type === 'tool-call-start' ? event.data?.label : undefined;
  upsertRun({ ...known, turns: run.turns, usage: run.usage, last_activity: typeof text === 'string' ? text : known.last_activity });
}

// A run in its own git worktree: its branch and what it changed, the files and the diff on demand.

/** `cadre/run_x: 2 files changed, +3 -1`, as the parent's output says it. */
export function worktreeText(worktree) {
  if (!worktree.commit) return `${worktree.branch}: working in its own worktree`;
  const files = `${worktree.files_changed} ${worktree.files_changed === 1 ? 'file' : 'files'} changed`;
  const merged = worktree.merged_at ? ' (merged)' : worktree.removed_at ? ' (removed)' : '';
  return `${worktree.branch}: ${files}, +${worktree.insertions} -${worktree.deletions}${merged}`;
}

function showWorktree(card, worktree) {
  const changes = field(card, 'changes');
  changes.hidden = !worktree;
  changes.textContent = worktree ? worktreeText(worktree) : '';
  card.querySelector('[data-action="changes"]').hidden = !worktree || Boolean(worktree.removed_at);
}

export async function toggleChanges(id) {
  const details = field(state.cards.get(id), 'details');
  if (!details.hidden && details.dataset.view === 'changes') {
    details.hidden = true;
    return;
  }
  const { worktree, files, diff } = await api(`/api/runs/${id}/worktree`);
  const list = element('ul', 'files mono');
  list.append(...files.map((file) => element('li', '', `${file.path}  +${file.insertions} -${file.deletions}`)));
  details.replaceChildren(
    element('h4', '', `Changes on ${worktree.branch}`),
    files.length > 0 ? list : element('div', 'muted', 'No changes.'),
    element('h4', '', 'Diff'),
    element('pre', 'diff mono', diff || '(empty)'),
    element('div', 'muted mono', `cadre worktree merge ${id}`),
  );
  details.dataset.view = 'changes';
  details.hidden = false;
}

export async function stopRun(id) {
  const { run } = await api(`/api/runs/${id}/stop`, { method: 'POST', body: {} });
  upsertRun(run);
}

/** Sends the text of a card's box to its run as a person's message; the box says where it went. */
export async function sendToRun(id) {
  const card = state.cards.get(id);
  const input = field(card, 'message');
  const text = input.value.trim();
  if (text === '') return;
  const interrupt = field(card, 'interrupt').checked;
  const sent = await api(`/api/runs/${id}/messages`, { method: 'POST', body: { message: text, interrupt } });
  input.value = '';
  field(card, 'interrupt').checked = false;
  field(card, 'sent').textContent =
    sent.kind === 'queued'
      ? 'Added to its task.'
      : sent.kind === 'follow-up'
        ? `It had finished: follow-up ${sent.run.id} started.`
        : sent.reachable
          ? interrupt
            ? 'Sent: it is interrupted and goes on with it.'
            : 'Sent: it reads it before its next model call.'
          : 'Stored: its process cannot be reached now; it gets it when the run goes on.';
  upsertRun(sent.run);
}

// What a run's subagent says, live: its streamed text on the card, its messages in the open details.

/** Characters of a subagent's streamed text a card shows: the end of what it is writing. */
export const liveTextChars = 600;

/** The run whose subagent works in `sessionId` (its child session), if the page shows it. */
export function runOfChildSession(sessionId) {
  for (const run of state.runs.values()) if (run.child_session_id === sessionId) return run;
  return undefined;
}

export function addRunText(sessionId, text) {
  const run = runOfChildSession(sessionId);
  const card = run && state.cards.get(run.id);
  if (!card || !activeStatuses.has(run.status)) return;
  const live = field(card, 'live');
  live.hidden = false;
  live.textContent = (live.textContent + text).slice(-liveTextChars);
}

export function addRunMessage(message) {
  const run = runOfChildSession(message.session_id);
  const card = run && state.cards.get(run.id);
  if (!card) return;
  // The streamed text is now a stored message: the transcript holds it.
  if (message.role === 'assistant') clearRunText(card);
  const transcript = field(field(card, 'details'), 'transcript');
  if (transcript && !transcript.querySelector(`[data-seq="${Number(message.seq)}"]`)) transcript.append(messageItem(message));
}

export function clearRunText(card) {
  const live = field(card, 'live');
  live.hidden = true;
  live.textContent = '';
}

export async function toggleDetails(id, { refresh = false } = {}) {
  const details = field(state.cards.get(id), 'details');
  // An open view of the run's changes stays as it is when the details would refresh.
  if (refresh && !details.hidden && details.dataset.view === 'changes') return;
  if (!details.hidden && !refresh && details.dataset.view !== 'changes') {
    details.hidden = true;
    return;
  }
  const [{ run, events }, { messages }] = await Promise.all([api(`/api/runs/${id}`), api(`/api/runs/${id}/transcript`)]);
  const outcome = run.error ? `${run.error.kind}: ${run.error.message}` : (run.result?.text ?? run.partial_result ?? '(no result yet)');
  const transcript = element('ol', 'messages');
  transcript.dataset.field = 'transcript';
  transcript.append(...messages.map(messageItem));
  const eventList = element('ol', 'events');
  eventList.append(...events.map((event) => element('li', 'mono', `${event.seq} ${event.at.slice(11, 19)} ${event.type} ${shorten(event.data, 80)}`)));
  const summary =
    run.result?.summarized && run.result.summary
      ? [element('h4', '', `Summary the parent got (of ${run.result.original_length} characters)`), element('div', 'text', run.result.summary)]
      : [];
  details.dataset.view = 'details';
  // A run with an output_schema shows its value as the JSON its parent got.
  const valued = run.result?.value !== undefined;
  const result = element(valued ? 'pre' : 'div', valued ? 'text mono' : 'text', outcome);
  result.dataset.field = valued ? 'value' : 'result';
  details.replaceChildren(
    ...summary,
    element('h4', '', valued ? 'Value (output: json)' : 'Result'),
    result,
    element('h4', '', 'Transcript'),
    transcript,
    element('h4', '', 'Events'),
    eventList,
  );
  details.hidden = false;
}

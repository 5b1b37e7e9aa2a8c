// Asks for approval of the open session: one card each, answered with Approve, Deny or Always.

import { api, attempt, byId, field } from './dom.js';
import { formatTime, shorten } from './format.js';
import { upsertRun } from './runs.js';
import { activeStatuses, state } from './state.js';

export function showApprovals(pending) {
  const ids = new Set(pending.map((approval) => approval.id));
  for (const id of [...state.approvals.keys()]) if (!ids.has(id)) removeApproval(id);
  for (const approval of pending) upsertApproval(approval);
}

export function upsertApproval(approval) {
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
  placeApproval(card);
}

/** Every ask of the session sits at the top of the session, where a person sees it without scrolling. */
export function placeApproval(card) {
  byId('approval-cards').append(card);
  byId('approvals').hidden = false;
}

export function removeApproval(id) {
  state.approvals.get(id)?.remove();
  state.approvals.delete(id);
  byId('approvals').hidden = byId('approval-cards').childElementCount === 0;
}

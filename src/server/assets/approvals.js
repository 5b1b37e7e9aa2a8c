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
  const preview = approvalPreview(approval.preview);
  if (preview) field(card, 'summary').after(preview);
  field(card, 'id').textContent = approval.id;
  field(card, 'waiting').textContent = `waiting since ${formatTime(approval.created_at)}`;
  const answer = (decision, always) =>
    attempt(async () => {
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
    const kind = /^(---|\+\+\+) /.test(line)
      ? 'file'
      : line.startsWith('@@')
        ? 'hunk'
        : line.startsWith('+')
          ? 'add'
          : line.startsWith('-')
            ? 'del'
            : line.startsWith('... ')
              ? 'more'
              : 'same';
    row.className = `diff-${kind}`;
    row.textContent = `${line}\n`;
    block.append(row);
  }
  return block;
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

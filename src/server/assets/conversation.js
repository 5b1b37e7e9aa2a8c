// The conversation of the open session: messages, and notifications as cards.

import { badge, byId, element } from './dom.js';
import { formatToolCall, shorten } from './format.js';
import { paintAgent, state } from './state.js';

/** A notification as a card: one row per finished run, its status, agent, description and the start of its result. */
export function notificationItem(message, runs) {
  const item = element('li', 'message notification-card');
  item.dataset.seq = message.seq;
  item.append(element('span', 'role', runs.length === 1 ? 'subagent finished' : `${runs.length} subagents finished`));
  for (const run of runs) {
    const row = element('div', 'notification-run');
    const head = element('div', 'notification-head');
    head.append(badge(run.status), paintAgent(element('strong', '', run.agent), run.agent), element('span', 'description', run.description));
    const link = element('a', 'mono muted', run.run_id);
    link.href = '#';
    link.addEventListener('click', (click) => {
      click.preventDefault();
      state.cards.get(run.run_id)?.scrollIntoView({ behavior: 'smooth', block: 'center' });
    });
    row.append(head, element('div', 'text', run.summary), link);
    item.append(row);
  }
  return item;
}

export function messageItem(message) {
  // The API says which runs a notification announces: the model-facing text is not read here.
  if (message.notification) return notificationItem(message, message.notification.runs);
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

export function addMessage(message) {
  const list = byId('messages');
  if (list.querySelector(`[data-seq="${Number(message.seq)}"]`)) return;
  list.append(messageItem(message));
  if (message.role === 'assistant') {
    byId('streaming').hidden = true;
    byId('streaming').textContent = '';
  }
}

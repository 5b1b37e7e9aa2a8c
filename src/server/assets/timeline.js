// The timeline: one bar per run from queued to started to ended, nested under the run that started it.

import { byId, element } from './dom.js';
import { formatSeconds, shorten } from './format.js';
import { paintAgent, state } from './state.js';

let timelineFrame = 0;

export function scheduleTimeline() {
  if (timelineFrame) return;
  timelineFrame = requestAnimationFrame(() => {
    timelineFrame = 0;
    renderTimeline();
  });
}

/** Runs in the order of their cards: each after the run that started it, oldest first. */
export function runsInTreeOrder() {
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
export function runEnd(run, now) {
  if (run.ended_at) return Date.parse(run.ended_at);
  if (run.owner_gone && run.lease_expires_at) return Math.min(Date.parse(run.lease_expires_at), now);
  return now;
}

export function statusGroup(status) {
  if (status.startsWith('canceled')) return 'canceled';
  if (status === 'abandoned') return 'failed';
  return status;
}

export function renderTimeline() {
  const rows = runsInTreeOrder();
  byId('timeline-panel').hidden = rows.length === 0;
  if (rows.length === 0) return;
  const now = Date.now();
  const start = Math.min(...rows.map(({ run }) => Date.parse(run.created_at)));
  const end = Math.max(start + 1000, ...rows.map(({ run }) => runEnd(run, now)));
  const span = end - start;
  const percent = (time) => `${(((time - start) / span) * 100).toFixed(2)}%`;
  const width = (from, to) => `${Math.max(0.4, ((to - from) / span) * 100).toFixed(2)}%`;
  byId('timeline').replaceChildren(
    ...rows.map(({ run, depth }) => {
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
    }),
  );
  byId('timeline-axis').textContent = `0s … ${formatSeconds(span)}`;
}

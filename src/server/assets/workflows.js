// Workflows (section 22): a workflow's runs shown as one group, headed by its name, status,
// phases, log and result, with a stop button while it runs.

import { api, attempt, badge, byId, element } from './dom.js';

const groups = new Map();

/** The element a run of a workflow goes in: its workflow's group, made (and loaded) on first use. */
export function workflowGroupFor(run) {
  const id = run.workflow?.id;
  if (!id) return null;
  let group = groups.get(id);
  if (!group || !group.section.isConnected) {
    const section = element('section', 'workflow');
    section.dataset.workflowId = id;
    const head = element('div', 'workflow-head');
    const info = element('div', 'workflow-info');
    const runs = element('div', 'workflow-runs');
    section.append(head, info, runs);
    byId('run-cards').append(section);
    group = { section, head, info, runs, timer: null };
    groups.set(id, group);
  }
  refreshWorkflow(id);
  return group.runs;
}

/** Loads a workflow again soon (a run of it changed): one request for a burst of changes. */
export function refreshWorkflow(id) {
  const group = groups.get(id);
  if (!group || group.timer) return;
  group.timer = setTimeout(() => {
    group.timer = null;
    attempt(async () => renderWorkflow(group, (await api(`/api/workflows/${id}`)).workflow));
  }, 200);
}

function renderWorkflow(group, workflow) {
  const done = workflow.runs.filter((run) => run.status === 'completed' || run.status === 'completed_empty').length;
  const stop = element('button', 'stop', 'Stop workflow');
  stop.type = 'button';
  stop.hidden = workflow.status !== 'running';
  stop.addEventListener('click', () => attempt(async () => renderWorkflow(group, (await api(`/api/workflows/${workflow.id}/stop`, { method: 'POST', body: {} })).workflow)));
  group.section.dataset.status = workflow.status;
  group.head.replaceChildren(
    element('strong', '', `workflow ${workflow.name}`),
    badge(workflow.status),
    element('span', 'mono', workflow.id),
    element('span', 'muted', `${done}/${workflow.runs.length} runs`),
    stop,
  );
  const phases = element('ol', 'workflow-phases');
  workflow.phases.forEach((phase, index) => {
    const item = element('li', index === workflow.phases.length - 1 && workflow.status === 'running' ? 'current' : '', phase.name);
    item.title = phase.at;
    phases.append(item);
  });
  const parts = [phases];
  if (workflow.log.length > 0) {
    const log = element('ol', 'workflow-log');
    log.append(...workflow.log.slice(-5).map((line) => element('li', 'mono', `${line.at.slice(11, 19)} ${line.text}`)));
    parts.push(log);
  }
  if (workflow.error) parts.push(element('div', 'text workflow-error', `${workflow.error.kind}: ${workflow.error.message}`));
  if (workflow.status === 'completed') parts.push(element('pre', 'text workflow-output', JSON.stringify(workflow.output, null, 2)));
  group.info.replaceChildren(...parts);
}

// The cadre dashboard: native ES modules, no framework, no build step. This one wires the forms
// and buttons and starts the page. Model output reaches the page only through textContent, never as HTML.

import { api, attempt, byId, notice } from './dom.js';
import { connectEvents } from './live.js';
import { upsertRun } from './runs.js';
import { loadSessions, openSession } from './sessions.js';
import { loadAgentColors, state } from './state.js';

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

byId('stop-session').addEventListener('click', () =>
  attempt(async () => {
    const { runs } = await api(`/api/sessions/${state.sessionId}/stop`, { method: 'POST', body: {} });
    for (const run of runs) upsertRun(run);
  }),
);

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
  node.textContent =
    workspace.state === 'trusted'
      ? 'Workspace configuration: trusted'
      : workspace.state === 'once'
        ? 'Workspace configuration: trusted for this server only (--trust)'
        : `Workspace configuration ${workspace.state === 'changed' ? 'changed since trusted' : 'not trusted'}: left out ${left} (review it and run cadre trust)`;
}

setInterval(() => attempt(loadSessions), 10_000);
attempt(showSandbox);
attempt(async () => {
  // Colours are a nicety: a failure to load them leaves the runs uncoloured, nothing else.
  await loadAgentColors().catch(() => {});
  await loadSessions();
  if (location.hash.length > 1) await openSession(decodeURIComponent(location.hash.slice(1)));
  else connectEvents(null);
});

// The address names the open session (`#ses_...`): a new one typed or pasted there opens it.
window.addEventListener('hashchange', () => {
  const id = decodeURIComponent(location.hash.slice(1));
  if (id && id !== state.sessionId) attempt(() => openSession(id, { reveal: true }));
});

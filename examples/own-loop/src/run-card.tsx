import type { CadreRunPartData } from 'cadre';

const post = (url: string, body?: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });

/** One run, live: what it does, what it spent, an ask to answer, and a stop button while it works. */
export function RunCard({ id, run, trail }: { id: string; run: CadreRunPartData; trail: string[] }) {
  const active = run.status === 'queued' || run.status === 'running';
  return (
    <section className="run-card" data-run-id={id} data-status={run.status} data-trail={trail.join(' ')}>
      <header>
        <strong>{run.agent}</strong> <span className="description">{run.description}</span>
        <span className="status">{run.status}</span>
      </header>
      {run.activity && <p className="activity">{run.activity}</p>}
      <p className="meta">
        {trail.join(' → ')} · {run.usage.input_tokens + run.usage.output_tokens} tokens{run.parent_run_id ? ` · started by ${run.parent_run_id}` : ''}
      </p>
      {run.approval && (
        <div className="approval">
          <span>Allow {run.approval.summary}?</span>
          <button data-action="approve" onClick={() => post(`/api/approvals/${run.approval!.id}`, { decision: 'approve' })}>
            Approve
          </button>
          <button data-action="deny" onClick={() => post(`/api/approvals/${run.approval!.id}`, { decision: 'deny' })}>
            Deny
          </button>
        </div>
      )}
      {active && (
        <button data-action="stop" onClick={() => post(`/api/runs/${id}/stop`)}>
          Stop
        </button>
      )}
    </section>
  );
}

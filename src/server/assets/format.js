// Values as a person reads them: tokens, times, durations, tool calls, states.

export function formatTokens(usage) {
  return `${usage.input_tokens} in${cacheText(usage)} / ${usage.output_tokens} out`;
}

/** ` · $0.0123`: what the run cost, where its provider or agent program said. */
export function costText(usage) {
  return typeof usage.cost_usd === 'number' ? ` · $${usage.cost_usd.toFixed(4)}` : '';
}

/** ` (900 cached, 100 cache writes)`: the prompt-cache part of the input, where the provider reported it. */
export function cacheText(usage) {
  const parts = [];
  if (usage.cache_read_tokens) parts.push(`${usage.cache_read_tokens} cached`);
  if (usage.cache_write_tokens) parts.push(`${usage.cache_write_tokens} cache writes`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

export function totalTokens(usage) {
  return usage.input_tokens + usage.output_tokens;
}

/** `running (owner gone)` for a run whose process died (the stored status stays until recovery). */
export function runStatusText(run) {
  return run.owner_gone ? `${run.status} (owner gone)` : run.status;
}

export function formatTime(iso) {
  return new Date(iso).toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
}

/** A tool call on one line; delegations read as `agent general: description`. */
export function formatToolCall(part) {
  const input = part.input ?? {};
  if (typeof input.agent === 'string') {
    const mode = input.run_in_background ? ' (background)' : '';
    return `→ ${part.toolName} ${input.agent}: ${shorten(input.description || input.task, 80)}${mode}`;
  }
  return `→ ${part.toolName} ${shorten(input)}`;
}

export function formatElapsed(run) {
  const start = Date.parse(run.started_at || run.created_at);
  // A run whose owner is gone stops at the end of its last lease rather than growing.
  const stopped = run.owner_gone && run.lease_expires_at ? Math.min(Date.parse(run.lease_expires_at), Date.now()) : Date.now();
  const end = run.ended_at ? Date.parse(run.ended_at) : stopped;
  const seconds = Math.max(0, Math.round((end - start) / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

export function shorten(value, length = 120) {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
}

/** A session's state (`/api/sessions`: kind plus fields) as a person reads it. */
export function stateText(sessionState) {
  switch (sessionState?.kind) {
    case 'awaiting_approval':
      return sessionState.approvals > 1 ? `awaiting approval (${sessionState.approvals})` : 'awaiting approval';
    case 'waiting_on_runs':
      return `waiting on ${sessionState.runs} run${sessionState.runs === 1 ? '' : 's'}`;
    case undefined:
      return '';
    default:
      return sessionState.kind;
  }
}

export function formatSeconds(milliseconds) {
  const seconds = Math.max(0, Math.round(milliseconds / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

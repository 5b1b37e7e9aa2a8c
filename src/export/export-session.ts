import { ConfigError } from '../errors/config-error.ts';
import { type Now, systemNow } from '../util/clock.ts';
import type { RunRecord, SessionRecord, Usage } from '../store/records.ts';
import { addUsage } from '../store/add-usage.ts';
import { redactSecretsDeep } from '../store/redact-secrets.ts';
import type { ExportedRun, ExportedWorkflow, SessionExport } from './session-export.ts';
import type { StoreView } from '../store/store-view.ts';

/** Options of `exportSession`. */
export interface ExportSessionOptions {
  /**
   * The clock for `exported_at`.
   * @default systemNow
   */
  now?: Now;
  /** The token budgets in force, written into the export when either is set. */
  limits?: { maxTokensPerRun?: number; maxTokensPerSession?: number };
}

/**
 * A session as one JSON document (docs/command-line.md): its conversation, and its runs with
 * their events and, nested, the runs each subagent started. Anything that looks like a
 * credential is replaced by `[REDACTED]`.
 *
 * @throws ConfigError `No session '<id>'.` when the store has no such session.
 * @example
 * const document = await exportSession(store, 'ses_01J...', { now: systemNow });
 */
export async function exportSession(store: StoreView, sessionId: string, { now = systemNow, limits = {} }: ExportSessionOptions = {}): Promise<SessionExport> {
  const session = await store.getSession(sessionId);
  if (!session) throw new ConfigError(`No session '${sessionId}'.`);
  const messages = await store.listMessages(sessionId);
  const usage: Usage = { input_tokens: 0, output_tokens: 0 };
  // Runs are found through sessions; a record pointing back at an ancestor must not loop.
  const visitedSessions = new Set([sessionId]);
  const runs = await exportRuns(store, sessionId, visitedSessions, usage);
  const agentUsage = await agentUsageOf(store, session);
  const workflows = await exportWorkflows(store, sessionId);
  const budgets =
    limits.maxTokensPerRun === undefined && limits.maxTokensPerSession === undefined
      ? {}
      : { token_budgets: { max_tokens_per_run: limits.maxTokensPerRun ?? null, max_tokens_per_session: limits.maxTokensPerSession ?? null } };
  return redactSecretsDeep<SessionExport>({
    format: 'cadre.session-export',
    version: 1,
    exported_at: now(),
    session: {
      id: session.id,
      agent: session.agent,
      model: session.model,
      created_at: session.created_at,
      status: session.status,
    },
    messages: messages.map((message) => ({
      seq: message.seq,
      role: message.role,
      content: message.content,
      created_at: message.created_at,
    })),
    runs,
    usage,
    agent_usage: agentUsage,
    ...(workflows.length > 0 ? { workflows } : {}),
    ...budgets,
  });
}

/** The session's workflows, oldest first, each with its runs by key (section 22). */
async function exportWorkflows(store: StoreView, sessionId: string): Promise<ExportedWorkflow[]> {
  const workflows = (await store.listWorkflows({ session_id: sessionId })).reverse();
  return Promise.all(
    workflows.map(async ({ lease_owner: _owner, lease_expires_at: _expires, stop_requested_at: _stop, ...workflow }) => {
      const runs = await store.listRuns({ workflow_id: workflow.id, order: 'oldest' });
      return { ...workflow, runs: runs.map((run) => ({ id: run.id, key: run.workflow?.key ?? '', agent: run.agent, status: run.status })) };
    }),
  );
}

/**
 * The tokens of the session's own agent: the primary agent's, stored with the session; for a
 * child session, those of the runs that worked in it (a resumed run goes on in the same session).
 */
async function agentUsageOf(store: StoreView, session: SessionRecord): Promise<Usage> {
  const usage = { ...((await store.getSessionUsage(session.id)) ?? { input_tokens: 0, output_tokens: 0 }) };
  const run = session.parent_run_id === null ? null : await store.getRun(session.parent_run_id);
  if (run === null) return usage;
  for (const sibling of await store.listRuns({ parent_session_id: run.parent_session_id })) {
    if (sibling.child_session_id !== session.id) continue;
    addUsage(usage, sibling.usage);
  }
  return usage;
}

/** The runs a session started, oldest first, each with its own nested runs. */
async function exportRuns(store: StoreView, sessionId: string, visitedSessions: Set<string>, usage: Usage): Promise<ExportedRun[]> {
  const exported: ExportedRun[] = [];
  for (const run of await store.listRuns({ parent_session_id: sessionId, order: 'oldest' })) {
    addUsage(usage, run.usage);
    const events = await store.listRunEvents(run.id);
    let nested: ExportedRun[] = [];
    if (!visitedSessions.has(run.child_session_id)) {
      visitedSessions.add(run.child_session_id);
      nested = await exportRuns(store, run.child_session_id, visitedSessions, usage);
    }
    exported.push({
      ...contractFields(run),
      events: events.map((event) => ({ seq: event.seq, at: event.at, type: event.type, data: event.data })),
      runs: nested,
    });
  }
  return exported;
}

/** The contract's run fields in the contract's order. */
function contractFields(run: RunRecord): Omit<ExportedRun, 'events' | 'runs'> {
  return {
    id: run.id,
    parent_session_id: run.parent_session_id,
    child_session_id: run.child_session_id,
    parent_run_id: run.parent_run_id,
    tool_call_id: run.tool_call_id,
    agent: run.agent,
    description: run.description,
    task: run.task,
    context: run.context,
    mode: run.mode,
    status: run.status,
    depth: run.depth,
    max_turns: run.max_turns,
    turns: run.turns,
    created_at: run.created_at,
    started_at: run.started_at,
    ended_at: run.ended_at,
    promoted_at: run.promoted_at,
    consumed_at: run.consumed_at,
    last_activity: run.last_activity,
    activity: run.activity,
    result: run.result,
    partial_result: run.partial_result,
    error: run.error,
    usage: run.usage,
    warnings: run.warnings,
    notification: run.notification,
    resumed_from: run.resumed_from,
    // The program's session (to resume it); its pid and host are this machine's bookkeeping. Runs
    // of cadre's own loop export as they always did.
    ...(run.harness ? { harness: { name: run.harness.name, session_id: run.harness.session_id } } : {}),
    // Only runs with a schema carry it (their `result.value` is the value it accepted).
    ...(run.output_schema ? { output_schema: run.output_schema } : {}),
    ...(run.forked_from ? { forked_from: run.forked_from } : {}),
    ...(run.worktree ? { worktree: run.worktree } : {}),
    // Only for a run someone sent a message to (docs/talking-to-runs.md).
    ...(run.messages ? { messages: run.messages } : {}),
  };
}

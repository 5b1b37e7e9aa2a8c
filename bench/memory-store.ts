import {
  isNotificationPending,
  type ApprovalRecord,
  type MessageRecord,
  type NewRunEvent,
  type SessionRuleRecord,
  type RunEventRecord,
  type RunRecord,
  type SessionRecord,
  type Usage,
  type WorkflowRecord,
} from '../src/store/records.ts';
import type { RunQuery, Store } from '../src/store/store.ts';

/**
 * A store that keeps everything in plain maps and nothing durable: not a product store (no
 * leases, no ordering of `listSessions`, no persistence). The fan-out benchmark runs cadre on it
 * once, to show what cadre costs without any storage, next to what the SQLite store adds.
 */
export function createMemoryStore(): Store {
  const sessions = new Map<string, SessionRecord>();
  const messages = new Map<string, MessageRecord[]>();
  const runs = new Map<string, RunRecord>();
  const events = new Map<string, RunEventRecord[]>();
  const sessionUsage = new Map<string, Usage>();
  const approvals = new Map<string, ApprovalRecord>();
  const sessionRules: SessionRuleRecord[] = [];
  const workflows = new Map<string, WorkflowRecord>();

  const addEvents = (list: readonly NewRunEvent[]) => {
    for (const event of list) {
      let stored = events.get(event.run_id);
      if (!stored) events.set(event.run_id, (stored = []));
      event.seq = stored.length + 1;
      stored.push({ ...event, seq: event.seq });
    }
  };
  const matches = (run: RunRecord, query: RunQuery) =>
    (query.parent_session_id === undefined || run.parent_session_id === query.parent_session_id) &&
    (query.parent_run_id === undefined || run.parent_run_id === query.parent_run_id) &&
    (query.statuses === undefined || query.statuses.includes(run.status)) &&
    (query.workflow_id === undefined || run.workflow?.id === query.workflow_id) &&
    (query.lease_owner === undefined || run.lease_owner === query.lease_owner) &&
    (query.stop_requested === undefined || (run.stop_requested_at != null && !isDone(run)) === query.stop_requested) &&
    (query.notification_pending === undefined || isNotificationPending(run) === query.notification_pending);
  const change = (id: string, patch: Partial<RunRecord>, list: readonly NewRunEvent[]) => {
    const run = runs.get(id);
    if (run) {
      Object.assign(run, patch);
      addEvents(list);
    }
    return run;
  };
  const isDone = (run: RunRecord) => !['queued', 'running'].includes(run.status);

  return {
    description: 'memory (benchmark only)',
    async insertWorkflow(workflow) {
      workflows.set(workflow.id, structuredClone(workflow));
    },
    async getWorkflow(id) {
      const workflow = workflows.get(id);
      return workflow ? structuredClone(workflow) : null;
    },
    async listWorkflows({ statuses, session_id, limit } = {}) {
      return [...workflows.values()]
        .filter((workflow) => (statuses === undefined || statuses.includes(workflow.status)) && (session_id === undefined || workflow.session_id === session_id))
        .reverse()
        .slice(0, limit)
        .map((workflow) => structuredClone(workflow));
    },
    async updateWorkflow(id, patch, guard = {}) {
      const workflow = workflows.get(id);
      if (!workflow || (guard.statuses && !guard.statuses.includes(workflow.status)) || (guard.lease_owner !== undefined && workflow.lease_owner !== guard.lease_owner)) return null;
      Object.assign(workflow, structuredClone(patch));
      return structuredClone(workflow);
    },
    async claimWorkflow(id, owner, expiresAt, expiredBefore) {
      const workflow = workflows.get(id);
      if (workflow?.status !== 'running') return null;
      const free = workflow.lease_owner === null || workflow.lease_owner === owner || workflow.lease_expires_at === null || workflow.lease_expires_at < expiredBefore;
      if (!free) return null;
      Object.assign(workflow, { lease_owner: owner, lease_expires_at: expiresAt });
      return structuredClone(workflow);
    },
    async insertApproval(approval) {
      approvals.set(approval.id, { ...approval });
    },
    async getApproval(id) {
      const approval = approvals.get(id);
      return approval ? { ...approval } : null;
    },
    async listApprovals({ statuses, session_id } = {}) {
      return [...approvals.values()].filter(
        (approval) => (statuses === undefined || statuses.includes(approval.status)) && (session_id === undefined || approval.session_id === session_id),
      );
    },
    async resolveApproval({ id, status, by, at, rule }) {
      const approval = approvals.get(id);
      if (approval?.status !== 'pending') return null;
      Object.assign(approval, { status, resolved_by: by, resolved_at: at, always: rule !== undefined });
      if (rule) sessionRules.push({ session_id: approval.session_id, ...rule, created_at: at, approval_id: id });
      return { ...approval };
    },
    async listSessionRules(sessionId) {
      return sessionRules.filter((rule) => rule.session_id === sessionId);
    },
    async createSession(session) {
      sessions.set(session.id, { ...session });
    },
    async getSession(id) {
      const session = sessions.get(id);
      return session ? { ...session } : null;
    },
    async listSessions() {
      return [...sessions.values()];
    },
    async updateSession(id, patch) {
      const session = sessions.get(id);
      if (session) Object.assign(session, patch);
    },
    async addSessionUsage(id, usage) {
      const total = sessionUsage.get(id) ?? { input_tokens: 0, output_tokens: 0 };
      sessionUsage.set(id, { input_tokens: total.input_tokens + usage.input_tokens, output_tokens: total.output_tokens + usage.output_tokens });
    },
    async getSessionUsage(id) {
      return sessions.has(id) ? { ...(sessionUsage.get(id) ?? { input_tokens: 0, output_tokens: 0 }) } : null;
    },
    async appendMessages(list) {
      return list.map((message) => {
        let stored = messages.get(message.session_id);
        if (!stored) messages.set(message.session_id, (stored = []));
        const record: MessageRecord = { ...message, seq: stored.length + 1 };
        stored.push(record);
        return record;
      });
    },
    async listMessages(sessionId, { afterSeq = 0 } = {}) {
      return (messages.get(sessionId) ?? []).filter((message) => message.seq > afterSeq);
    },
    async updateMessageContent(sessionId, seq, content) {
      const message = messages.get(sessionId)?.[seq - 1];
      if (message) message.content = content;
    },
    async commitMessage(commit) {
      const refused = commit.runs.filter((each) => !runs.has(each.id) || !each.check({ ...runs.get(each.id)! })).map((each) => each.id);
      if (refused.length > 0) return { message: null, runs: [], refused };
      let message: MessageRecord;
      if (commit.seq === undefined) {
        [message] = await this.appendMessages([{ session_id: commit.session_id, role: commit.role, content: commit.content, created_at: commit.created_at }]);
      } else {
        message = messages.get(commit.session_id)![commit.seq - 1];
        message.content = commit.content;
      }
      const changed = commit.runs.map((each) => {
        const events = each.events({ ...message });
        const run = change(each.id, each.patch, events)!;
        return { run: { ...run }, events: events as RunEventRecord[] };
      });
      return { message: { ...message }, runs: changed, refused };
    },
    async insertRun(run, event) {
      runs.set(run.id, { ...run });
      addEvents([event]);
    },
    async transitionRun({ id, from, to, patch, patchFor, event }) {
      const run = runs.get(id);
      if (!run || !from.includes(run.status)) return null;
      Object.assign(run, patch, patchFor?.({ ...run }), { status: to });
      addEvents([event]);
      return { ...run };
    },
    async updateRun(id, patch, list = []) {
      const run = change(id, patch, list);
      return run ? { ...run } : null;
    },
    async patchRun(id, patch, list = []) {
      return change(id, patch, list) !== undefined;
    },
    async appendRunEvents(list) {
      addEvents(list);
    },
    async getRun(id) {
      const run = runs.get(id);
      return run ? { ...run } : null;
    },
    async listRuns(query) {
      return [...runs.values()].filter((run) => matches(run, query)).map((run) => ({ ...run }));
    },
    async listRunEvents(runId, { afterSeq = 0 } = {}) {
      return (events.get(runId) ?? []).filter((event) => event.seq > afterSeq);
    },
    async renewLeases() {
      return 0;
    },
    async claimRun() {
      return null;
    },
    async flush() {},
    async close() {},
  };
}

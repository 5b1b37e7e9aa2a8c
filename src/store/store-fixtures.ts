import type { NewRunEvent, RunRecord, SessionRecord } from './records.ts';
import { renderActivity } from './run-activity.ts';

/**
 * Records for store tests, complete and valid, with fixed times. Each field can be overridden.
 * Not part of the public entry point.
 */
export function sessionFixture(overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: 'ses_1',
    agent: 'main',
    model: 'scripted:test',
    created_at: '2025-01-01T00:00:00.000Z',
    status: 'idle',
    parent_run_id: null,
    auto_resumes: 0,
    user_canceled_at: null,
    ...overrides,
  };
}

/** A queued foreground run of `ses_1`. */
export function runFixture(overrides: Partial<RunRecord> = {}): RunRecord {
  const id = overrides.id ?? 'run_1';
  // The text and the typed value agree, as a store keeps them: either may be given.
  const activity = overrides.activity ?? (overrides.last_activity ? { kind: 'text' as const, text: overrides.last_activity } : null);
  return {
    id,
    parent_session_id: 'ses_1',
    child_session_id: `ses_child_${id}`,
    parent_run_id: null,
    tool_call_id: 'call_1',
    agent: 'researcher',
    description: 'Find the facts',
    task: 'Find the facts about the store.',
    context: null,
    mode: 'foreground',
    status: 'queued',
    depth: 1,
    max_turns: 20,
    turns: 0,
    created_at: '2025-01-01T00:00:01.000Z',
    started_at: null,
    ended_at: null,
    promoted_at: null,
    consumed_at: null,
    result: null,
    partial_result: null,
    error: null,
    usage: { input_tokens: 0, output_tokens: 0 },
    warnings: [],
    notification: null,
    resumed_from: null,
    output_schema: null,
    forked_from: null,
    lease_owner: null,
    lease_expires_at: null,
    stop_requested_at: null,
    stop_requested_by: null,
    stop_reason: null,
    worktree: null,
    workflow: null,
    input_hash: null,
    harness: null,
    ...overrides,
    activity,
    last_activity: activity === null ? null : renderActivity(activity),
  };
}

/** An event of `runId` at a fixed time. */
export function eventFixture(
  runId: string,
  type: NewRunEvent['type'] = 'activity',
  data: Record<string, unknown> = {},
  at = '2025-01-01T00:00:02.000Z',
): NewRunEvent {
  return { run_id: runId, at, type, data };
}

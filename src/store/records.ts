/**
 * The records cadre stores. Field names follow the public contract (snake_case), so the same
 * objects serve the store, the HTTP API and the export without renaming.
 */

/** Every state a run can be in. A finished state never changes. */
export const runStatuses = ['queued', 'running', 'completed', 'completed_empty', 'failed', 'canceled_by_user', 'canceled_by_parent', 'abandoned'] as const;

export type RunStatus = (typeof runStatuses)[number];

/** States a run can never leave. */
export const finishedStatuses: ReadonlySet<RunStatus> = new Set([
  'completed',
  'completed_empty',
  'failed',
  'canceled_by_user',
  'canceled_by_parent',
  'abandoned',
]);

/** Whether a status is final. */
export function isFinished(status: RunStatus): boolean {
  return finishedStatuses.has(status);
}

/**
 * Whether a run's notification is pending: set when a background run ends, cleared (delivered)
 * only in the same commit that stores its message in the parent's transcript.
 */
export function isNotificationPending(run: Pick<RunRecord, 'notification'>): boolean {
  return run.notification !== null && run.notification.delivered_at === null && !run.notification.suppressed;
}

/** Why a run failed. */
export type RunErrorKind =
  | 'model_error'
  | 'execution_error'
  | 'max_turns'
  | 'timeout'
  | 'too_many_active'
  | 'budget_exceeded'
  /** A run with an `output_schema` that gave no value the schema accepts, after its repairs. */
  | 'invalid_output'
  /** A delegation a person or a rule refused (CONTRACT section 19). */
  | 'denied';

/** Whether the parent waits for the run (`foreground`) or carries on (`background`). */
export type RunMode = 'foreground' | 'background';

/** The final text of a run, as stored in full. */
export interface RunResult {
  text: string;
  /** Whether the text the parent saw was cut to `limits.maxResultChars`. */
  truncated: boolean;
  original_length: number;
  /**
   * Whether the parent got a summary instead of a cut (`summarize.enabled`, docs/runs-and-limits.md).
   * Absent when no summary was tried.
   */
  summarized?: boolean;
  /** The summary the parent got, when there is one; `text` keeps the full result. */
  summary?: string | null;
  /** Why a summary that was tried is missing (it failed or took too long): the parent got a cut. */
  summary_error?: string | null;
  /**
   * The value a run with an `output_schema` gave, as the schema accepted it; `text` is its JSON
   * (2-space indented), never summarized. Absent for runs without a schema.
   */
  value?: Record<string, unknown>;
}

/** Token usage of a run or a session. */
export interface Usage {
  /** Every input token, cached ones included (budgets count them). */
  input_tokens: number;
  output_tokens: number;
  /** Of `input_tokens`, those read from the provider's prompt cache, where it reports them. */
  cache_read_tokens?: number;
  /** Of `input_tokens`, those written to the provider's prompt cache, where it reports them. */
  cache_write_tokens?: number;
  /** What an agent program (section 21) says the run cost, in US dollars, where it reports it. */
  cost_usd?: number;
}

/** The agent program of a run, its own session id (to resume it), and where its process runs. */
export interface HarnessRecord {
  name: string;
  /** The program's session, once it said which; null before. */
  session_id: string | null;
  /** The program's process (its pid namespace's bubblewrap) and host, while it may be alive. */
  pid?: number | null;
  host?: string | null;
}

/** The `SubagentRun` record (docs/runs-and-limits.md). */
export interface RunRecord {
  id: string;
  parent_session_id: string;
  child_session_id: string;
  /** The run whose subagent started this run, when a subagent delegated. */
  parent_run_id: string | null;
  tool_call_id: string | null;
  agent: string;
  description: string;
  task: string;
  context: string | null;
  mode: RunMode;
  status: RunStatus;
  depth: number;
  max_turns: number;
  turns: number;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  promoted_at: string | null;
  consumed_at: string | null;
  /** The text of `activity` (docs/runs-and-limits.md): kept for readers of the contract and export v1. */
  last_activity: string | null;
  /** What the run is doing, as data; stored before activity was typed, a line reads as `{kind: 'text'}`. */
  activity: RunActivity | null;
  result: RunResult | null;
  partial_result: string | null;
  error: { kind: RunErrorKind; message: string } | null;
  usage: Usage;
  warnings: Array<{ kind: string; at: string }>;
  notification: { delivered_at: string | null; suppressed: boolean } | null;
  resumed_from: string | null;
  /** The agent program that carries the run out (docs/harnesses.md); null or absent for cadre's own loop. */
  harness?: HarnessRecord | null;
  /**
   * The JSON Schema (top level an object) the run's result must match (docs/structured-output.md);
   * null (or absent, in records made before it existed) for a run with free text. A follow-up keeps it.
   */
  output_schema?: Record<string, unknown> | null;
  /** The parent run or session whose conversation this run's child session started with (`fork`), or null. */
  forked_from: string | null;
  /** The process that executes the run; renewed while it works (crash survival). */
  lease_owner: string | null;
  lease_expires_at: string | null;
  /** Set by a person's stop from any process; the owner sees it and cancels the run. */
  stop_requested_at: string | null;
  stop_requested_by: 'user' | 'parent' | null;
  stop_reason: string | null;
  /** The workflow that started the run, and the run's durable key in it (CONTRACT section 22); null otherwise. */
  workflow?: { id: string; key: string } | null;
  /** A hash of the inputs of the workflow call that made the run: a replay with other inputs at its key diverges. */
  input_hash?: string | null;
  /** The run's own git worktree (`isolation: worktree`, docs/worktrees.md); null for a run in the workspace. */
  worktree: RunWorktree | null;
  /**
   * The messages its parent or a person sent the run once it was made (docs/talking-to-runs.md),
   * in the order sent; absent until the first one. A message is pending until `delivered_at`.
   */
  messages?: RunMessage[];
}

/**
 * A run's git worktree: where it works, its branch and base, and what it changed. `commit` and the
 * counts are set when the run ends (null and 0 while it works).
 */
export interface RunWorktree {
  /** The worktree's folder, `<workspace>/.cadre/worktrees/<run_id>`. */
  path: string;
  /** `cadre/<run_id>`. */
  branch: string;
  /** The commit the branch was made from (`worktree.baseRef`, resolved). */
  base: string;
  /** The branch's tip once the run ended and its changes were committed. */
  commit: string | null;
  files_changed: number;
  insertions: number;
  deletions: number;
  /** When `cadre worktree merge` brought it into the workspace's branch. */
  merged_at?: string | null;
  /** When its worktree and branch were removed. */
  removed_at?: string | null;
}

/** Who sent a message to a run: its parent (the model, through `agent_send`) or a person. */
export type RunMessageSender = 'parent' | 'person';

/**
 * A message sent to a run that already started (its inbox, kept on the run). It is stored before it
 * is acknowledged, and marked delivered in the same commit that puts it in the child session's
 * transcript (or, for a queued run, in its task).
 */
export interface RunMessage {
  /** Its id, prefix `msg_`. */
  id: string;
  from: RunMessageSender;
  /** The text as sent (without the person's marker). */
  text: string;
  /** Whether the model call and tool calls under way were to be aborted for it. */
  interrupt: boolean;
  sent_at: string;
  /** When it reached the subagent; null while it waits. */
  delivered_at: string | null;
  /**
   * Where it arrived: the child session's transcript (its `message-deliver` event names the
   * message's `seq` there), or the task of a queued run.
   */
  delivered_to: 'transcript' | 'task' | null;
}

/** Whether a run has messages waiting to be delivered. */
export function hasPendingMessages(run: Pick<RunRecord, 'messages'>): boolean {
  return run.messages?.some((message) => message.delivered_at === null) ?? false;
}

/** The kebab-case event types of a run (docs/runs-and-limits.md). */
export type RunEventType =
  | 'run-queued'
  | 'run-start'
  | 'step-start'
  | 'tool-call-start'
  | 'tool-call-end'
  | 'activity'
  | 'warning'
  | 'run-end'
  | 'notification-deliver'
  | 'result-consume'
  | 'approval-request'
  | 'approval-resolve'
  | 'summary'
  | 'message-in'
  | 'message-deliver';

/** One stored event of a run, ordered by `seq` within the run. */
export interface RunEventRecord {
  run_id: string;
  seq: number;
  at: string;
  type: RunEventType;
  data: Record<string, unknown>;
}

/**
 * A run event before the store gives it its `seq`. The store sets `seq` on the object once it
 * has written it, so the caller can announce the event with its place in the run's list.
 */
export type NewRunEvent = Omit<RunEventRecord, 'seq'> & { seq?: number };

/** Where a session's conversation stands. */
export type SessionStatus = 'idle' | 'running' | 'failed' | 'canceled';

/** A conversation with one agent. */
export interface SessionRecord {
  id: string;
  agent: string;
  /** The model spec (`provider:model-id`) or a label for an injected model. */
  model: string;
  created_at: string;
  status: SessionStatus;
  /** The run this session is the child session of; null for a primary session. */
  parent_run_id: string | null;
  /** Consecutive parent turns started by notifications without a user message. */
  auto_resumes: number;
  /** Set when a person canceled the session's last turn: no auto-resume until the next user message. */
  user_canceled_at: string | null;
}

/** Roles of stored messages: the AI SDK's model message roles. */
export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

/** One stored message, ordered by `seq` within its session. */
export interface MessageRecord {
  session_id: string;
  seq: number;
  role: MessageRole;
  /** The AI SDK `ModelMessage` content: a string or an array of parts. */
  content: unknown;
  created_at: string;
}

/** A message before the store gives it its `seq`. */
export type NewMessage = Omit<MessageRecord, 'seq'>;

/** Where an ask for approval stands: waiting, answered, or closed unanswered (its run stopped). */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'canceled';

/**
 * Who or what answered an ask: a person, a rule set with "always" for the session, `--yes`, nobody
 * able to answer (`--approvals deny`), the timeout, or a stop of the run that asked.
 */
export type ApprovalResolver = 'person' | 'rule' | 'flag' | 'no_approver' | 'timeout' | 'stop';

/** A tool call that waits for a person's answer (docs/tools-and-approvals.md). Ids start with `apr_`. */
export interface ApprovalRecord {
  id: string;
  /** The primary session the ask belongs to: "always" answers become rules of this session. */
  session_id: string;
  /** The run whose subagent made the call; null for the primary agent. */
  run_id: string | null;
  agent: string;
  tool: string;
  /** The call's main argument (`bash`'s command), when the tool has one. */
  argument: string | null;
  /** The risk of the tool: read, write, exec or network. */
  risk: string;
  /** One line: the tool and its argument, `bash npm test`. */
  summary: string;
  status: ApprovalStatus;
  created_at: string;
  resolved_at: string | null;
  resolved_by: ApprovalResolver | null;
  /** Whether the answer became a rule for the rest of the session. */
  always: boolean;
  /** The process that waits for the answer. */
  owner: string | null;
  /** What the call would do, as it stood when it asked; null for a tool that has no preview. */
  preview: ApprovalPreview | null;
}

/**
 * What an ask shows of its call, computed when it asks: the unified diff a file write or edit
 * would make (`diff`, against the file as it was, or from nothing for a new file), or `bash`'s
 * full command (`command`). Secrets are redacted; a long diff ends with a `... N more lines` line.
 */
export type ApprovalPreview = { kind: 'diff'; path: string; diff: string } | { kind: 'command'; command: string };

/** An answer a person gave with "always": a rule for the rest of a session. */
export interface SessionRuleRecord {
  session_id: string;
  /** A permission rule, like `bash(npm test)`. */
  rule: string;
  decision: 'allow' | 'deny';
  created_at: string;
  approval_id: string | null;
}

/**
 * What a run is doing, as data (STYLE habit 16): the parts that write it and the parts that show
 * it agree on these kinds, never on display text. `renderActivity` (run-activity.ts) makes the line
 * of docs/runs-and-limits.md (`last_activity`, the `activity` event's `text`).
 */
export type RunActivity =
  /** Created, not yet looked at by the scheduler. */
  | { kind: 'queued' }
  /** Held back by `limits.maxActivePerParent` / `limits.maxActiveGlobal`. */
  | { kind: 'waiting_for_slot' }
  /** A model call is under way and has shown nothing yet. */
  | { kind: 'waiting_for_model' }
  /** A tool call and its main argument (`read_file src/a.ts`, `grep TODO in src`). */
  | { kind: 'tool'; tool: string; argument?: string }
  /** Streamed text (its last sentence), or a line stored before activity was typed. */
  | { kind: 'text'; text: string }
  /** A long result being summarized for the parent. */
  | { kind: 'summarizing'; characters: number }
  /** A tool call that waits for a person's answer. */
  | { kind: 'awaiting_approval'; tool: string; argument?: string }
  /** A tool call the rules or a person refused. */
  | { kind: 'denied'; tool: string; argument?: string; by: ApprovalResolver }
  /** The run ended: its status and the start of its result or error. */
  | { kind: 'finished'; status: RunStatus; detail?: string };

/** The kinds of {@link RunActivity}. */
export type RunActivityKind = RunActivity['kind'];

/** The data of an `activity` event: the typed value with its rendered `text` beside it. */
export type ActivityEventData = RunActivity & { text: string };

/** Every state a workflow can be in (CONTRACT section 22); all but `running` are final. */
export const workflowStatuses = ['running', 'completed', 'failed', 'canceled_by_user', 'abandoned'] as const;

export type WorkflowStatusName = (typeof workflowStatuses)[number];

/** Where a workflow's script came from, so a replay finds it again. */
export type WorkflowSourceRecord =
  /** A file (an ES module with a default export): its path and its text when it started. */
  | { kind: 'file'; path: string; text: string }
  /** A name a library process registered with `cadre.workflow(name, fn)`. */
  | { kind: 'registered'; name: string }
  /** A script a model wrote for the `workflow` tool. */
  | { kind: 'script'; text: string };

/** A workflow: a script of runs that survives a crash (docs/workflows.md). Ids start with `wf_`. */
export interface WorkflowRecord {
  id: string;
  name: string;
  status: WorkflowStatusName;
  /** The session its runs belong to. */
  session_id: string;
  /** The run whose model started it (the `workflow` tool), or null. */
  parent_run_id: string | null;
  /** The runs' depth is this plus one. */
  depth: number;
  input: unknown;
  /** The script's return value (JSON) once completed. */
  output: unknown;
  error: { kind: string; message: string } | null;
  /** The phases the script entered, in order. */
  phases: Array<{ name: string; at: string }>;
  /** The script's `w.log` lines. */
  log: Array<{ at: string; text: string }>;
  source: WorkflowSourceRecord;
  /** Most runs it may start; null for no bound. */
  max_runs: number | null;
  created_at: string;
  updated_at: string;
  ended_at: string | null;
  /** The process that runs (or replays) the script; renewed while it does. */
  lease_owner: string | null;
  lease_expires_at: string | null;
  /** Set by a person's stop from any process; the owner ends the workflow `canceled_by_user`. */
  stop_requested_at: string | null;
}

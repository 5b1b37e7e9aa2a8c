import type {
  ApprovalRecord,
  ApprovalResolver,
  ApprovalStatus,
  MessageRecord,
  MessageRole,
  NewMessage,
  NewRunEvent,
  RunEventRecord,
  RunRecord,
  RunStatus,
  SessionRecord,
  Usage,
  SessionRuleRecord,
  WorkflowRecord,
  WorkflowStatusName,
} from './records.ts';
import type { StoreFailureError } from './store-failure-error.ts';

/** Which asks for approval to list, oldest first. All given filters must match. */
export interface ApprovalQuery {
  statuses?: readonly ApprovalStatus[];
  session_id?: string;
  run_id?: string;
  owner?: string;
  limit?: number;
}

/** The one answer of an ask: written only if the ask is still pending (compare-and-set). */
export interface ApprovalResolution {
  id: string;
  status: Exclude<ApprovalStatus, 'pending'>;
  by: ApprovalResolver;
  at: string;
  /** Also store this rule for the ask's session, in the same transaction. */
  rule?: Omit<SessionRuleRecord, 'session_id' | 'created_at' | 'approval_id'>;
}

/** Which runs to list. All given filters must match. */
export interface RunQuery {
  parent_session_id?: string;
  parent_run_id?: string;
  /** Only runs in one of these states. */
  statuses?: readonly RunStatus[];
  /** Only runs of this workflow (section 22). */
  workflow_id?: string;
  /** Only runs whose lease owner is this process. */
  lease_owner?: string;
  /** Only runs with a stop request that is not carried out yet. */
  stop_requested?: boolean;
  /** Only runs whose lease ended before this ISO time. */
  lease_expired_before?: string;
  /**
   * Only runs whose notification is pending (`notification` set, not delivered, not suppressed):
   * finished background runs whose parent has not got their message yet.
   */
  notification_pending?: boolean;
  /** Only runs that have (true) or have not (false) a git worktree (`isolation: worktree`). */
  worktree?: boolean;
  /** Only runs with a message sent to them that is not delivered yet (`RunMessage.delivered_at` null). */
  messages_pending?: boolean;
  /** @default 'newest' */
  order?: 'newest' | 'oldest';
  limit?: number;
}

/** Fields of a run that may change without a state transition; `last_activity` follows `activity` (its text). */
export type RunPatch = Partial<Omit<RunRecord, 'id' | 'status' | 'parent_session_id' | 'child_session_id' | 'last_activity'>>;

/** A state transition, written with its event in one transaction. */
export interface RunTransition {
  id: string;
  /** The move happens only if the run is in one of these states (compare-and-set). */
  from: readonly RunStatus[];
  to: RunStatus;
  patch?: RunPatch;
  /**
   * More fields that depend on the run as it stands at the move (its mode, whether it was read),
   * computed inside the compare-and-set and written with the rest; laid over `patch`.
   */
  patchFor?: (current: RunRecord) => RunPatch;
  /**
   * A further condition on the run as it stands at the move, checked inside the compare-and-set
   * (a run does not end while a message waits for it): false writes nothing. @default none
   */
  check?: (current: RunRecord) => boolean;
  event: NewRunEvent;
}

/**
 * A change to one run written together with a message, if the run as stored passes `check`
 * (compare-and-set inside the commit). The rules (which runs may change, what changes, which
 * events) are the caller's; the store only writes them atomically.
 */
export interface GuardedRunChange {
  id: string;
  /** Whether the run as it stands may take this change; an unknown run never may. */
  check: (current: RunRecord) => boolean;
  patch: RunPatch;
  /** The run's events written with the change, given the message as stored (its `seq`). */
  events: (message: MessageRecord) => NewRunEvent[];
}

/**
 * A message and changes to runs, written in one commit: all of it or nothing. A crash keeps both
 * or neither (a notification message and the delivery marks of the runs it announces).
 */
export interface MessageCommit {
  session_id: string;
  /** A stored message to rewrite (a later notification joining it); absent, the message is appended. */
  seq?: number;
  role: MessageRole;
  content: unknown;
  created_at: string;
  runs: readonly GuardedRunChange[];
}

/** What {@link Store.commitMessage} did. */
export interface MessageCommitResult {
  /** The message as stored; null when nothing was written. */
  message: MessageRecord | null;
  /** The runs changed, each with its events as stored. */
  runs: Array<{ run: RunRecord; events: RunEventRecord[] }>;
  /**
   * Runs that failed their `check` (or are unknown). When any does, nothing at all is written:
   * the caller decides again without them.
   */
  refused: string[];
}

/** Which workflows to list, newest first. All given filters must match. */
export interface WorkflowQuery {
  statuses?: readonly WorkflowStatusName[];
  session_id?: string;
  limit?: number;
}

/** Fields of a workflow that change while it runs: its state, result, phases, log and lease. */
export type WorkflowPatch = Partial<
  Pick<WorkflowRecord, 'status' | 'output' | 'error' | 'phases' | 'log' | 'updated_at' | 'ended_at' | 'lease_owner' | 'lease_expires_at' | 'stop_requested_at'>
>;

/** What a workflow must be as stored for a change to be written (compare-and-set). */
export interface WorkflowGuard {
  statuses?: readonly WorkflowStatusName[];
  /** Only while this process holds its lease. */
  lease_owner?: string;
}

/**
 * Where cadre keeps sessions, messages, runs and run events. Engines (SQLite, Postgres) hide
 * behind it: no SQL, connection or transaction type leaks out.
 *
 * Reads made by this process see its own writes at once. Engines may group the writes of
 * concurrent runs into shared transactions (group commit) and may resolve a write before its
 * commit (asynchronous commit), but keep the order of writes, never commit part of one, and
 * commit within a short bound; `flush()` resolves once everything written before it is durable.
 */
export interface Store {
  /** A label of the engine, for logs (`sqlite:./.cadre/cadre.db`). Never holds a secret. */
  readonly description: string;
  /**
   * The files this store keeps on this machine (a SQLite database and its `-wal`, `-shm` and
   * `-journal`), absolute; none for a server database. Nothing else in a process that holds the
   * store may open them: closing any descriptor of a file drops every POSIX lock the process
   * holds on it, SQLite's included. `createWorkspaceTools({ storeFiles })` keeps its tools off them.
   */
  readonly files?: readonly string[];

  createSession(session: SessionRecord): Promise<void>;
  getSession(id: string): Promise<SessionRecord | null>;
  /** Sessions, newest first. */
  listSessions(options?: { limit?: number; primaryOnly?: boolean }): Promise<SessionRecord[]>;
  updateSession(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<void>;
  /**
   * Adds tokens to a session's own usage (the model calls of its own agent, not of its runs),
   * as one increment in the store, so processes sharing it never lose each other's counts.
   */
  addSessionUsage(id: string, usage: Usage): Promise<void>;
  /** A session's own usage (see `addSessionUsage`); null for an unknown session. */
  getSessionUsage(id: string): Promise<Usage | null>;

  /** Appends messages in order; returns them with their `seq`. */
  appendMessages(messages: readonly NewMessage[]): Promise<MessageRecord[]>;
  listMessages(sessionId: string, options?: { afterSeq?: number }): Promise<MessageRecord[]>;
  /**
   * Replaces the content of a stored message. Only for a notification that has not reached a
   * model yet, when a later notification joins it.
   */
  updateMessageContent(sessionId: string, seq: number, content: unknown): Promise<void>;

  /**
   * Stores a message (appended, or rewriting message `seq`) and changes runs with their events,
   * in one commit. Compare-and-set: if any run fails its `check`, nothing is written and those
   * runs are returned as `refused`. Rewriting a message that does not exist rejects.
   */
  commitMessage(commit: MessageCommit): Promise<MessageCommitResult>;

  /** Stores a new run together with its first event. */
  insertRun(run: RunRecord, event: NewRunEvent): Promise<void>;
  /** Moves a run to a new state if it is in one of `from`; null when it was not (nothing written). */
  transitionRun(transition: RunTransition): Promise<RunRecord | null>;
  /** Changes non-state fields of a run, with optional events, in one transaction. Null if no such run. */
  updateRun(id: string, patch: RunPatch, events?: readonly NewRunEvent[]): Promise<RunRecord | null>;
  /**
   * Like `updateRun`, without reading the run back: for frequent writes whose caller already
   * knows the run (turns, usage, activity). False if no such run.
   */
  patchRun(id: string, patch: RunPatch, events?: readonly NewRunEvent[]): Promise<boolean>;
  appendRunEvents(events: readonly NewRunEvent[]): Promise<void>;
  getRun(id: string): Promise<RunRecord | null>;
  listRuns(query: RunQuery): Promise<RunRecord[]>;
  listRunEvents(runId: string, options?: { afterSeq?: number; limit?: number }): Promise<RunEventRecord[]>;
  /** Extends the lease of every active run this owner holds; returns how many. */
  renewLeases(owner: string, expiresAt: string): Promise<number>;
  /**
   * Takes over a run whose lease expired (or that has no owner), so only one process recovers it.
   * Returns the run if this caller won it.
   */
  claimRun(id: string, owner: string, expiresAt: string, expiredBefore: string): Promise<RunRecord | null>;

  /** Stores a new ask for approval (status `pending`). */
  insertApproval(approval: ApprovalRecord): Promise<void>;
  getApproval(id: string): Promise<ApprovalRecord | null>;
  listApprovals(query?: ApprovalQuery): Promise<ApprovalRecord[]>;
  /**
   * Answers a pending ask, with its "always" rule, in one transaction; null when it was not
   * pending any more (nothing written). Of racing answers from any processes exactly one wins.
   */
  resolveApproval(resolution: ApprovalResolution): Promise<ApprovalRecord | null>;
  /** The rules people set with "always" in a session, oldest first. */
  listSessionRules(sessionId: string): Promise<SessionRuleRecord[]>;

  /** Stores a new workflow (section 22). */
  insertWorkflow(workflow: WorkflowRecord): Promise<void>;
  getWorkflow(id: string): Promise<WorkflowRecord | null>;
  /** Workflows, newest first. */
  listWorkflows(query?: WorkflowQuery): Promise<WorkflowRecord[]>;
  /**
   * Changes a workflow if it stands as `guard` says (compare-and-set); the workflow as written,
   * or null when it did not (nothing written) or is unknown.
   */
  updateWorkflow(id: string, patch: WorkflowPatch, guard?: WorkflowGuard): Promise<WorkflowRecord | null>;
  /**
   * Takes over a running workflow whose lease ended before `expiredBefore` (or that has no owner),
   * or that `owner` holds already, so one process replays it at a time. The workflow if this caller won it.
   */
  claimWorkflow(id: string, owner: string, expiresAt: string, expiredBefore: string): Promise<WorkflowRecord | null>;

  /** Commits everything written so far; rejects if that cannot be done (the writes are then lost). */
  flush(): Promise<void>;
  /**
   * Calls `listener` once the store stops taking writes for good (a full disk, a file that became
   * read-only, was damaged, deleted or replaced): from then on every write and `flush()` rejects
   * with that {@link StoreFailureError}. The runtime stops its runs' work when it hears of it.
   * @returns a function that removes the listener.
   */
  onFailure?(listener: (failure: StoreFailureError) => void): () => void;
  /**
   * A number that changes whenever another connection commits to the database: another process,
   * or another store of this process on the same file (SQLite's `PRAGMA data_version`), never
   * this store's own commits. Cheap enough to read every few milliseconds, so the polling
   * coordination looks for signals of other processes as soon as one wrote instead of at its
   * next poll. Absent where the engine tells of changes itself (Postgres' LISTEN/NOTIFY). A closed
   * store keeps answering its last number.
   */
  externalVersion?(): number;
  close(): Promise<void>;
}

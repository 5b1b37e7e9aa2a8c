import type { ToolSet } from 'ai';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { AnsweredApproval, ApprovalAnswer } from '../approvals/answer-approval.ts';
import type { Limits } from '../config/limits.ts';
import type { CadreNotifications } from '../embed/app-notifications.ts';
import type { CadreToolsOptions } from '../embed/app-tools.ts';
import type { CadreRunPartWriter, WriteRunPartsOptions } from '../embed/write-run-parts.ts';
import type { SecretRedactor } from '../models/secret-redactor.ts';
import type { Coordination } from '../coordination/coordination.ts';
import type { CadreInterest, CadreListener, RunBus } from '../runs/run-bus.ts';
import type { RunLedger } from '../runs/run-ledger.ts';
import type { RunManager } from '../runs/run-manager.ts';
import type { StopCause } from '../runs/run-stop.ts';
import type { SessionTokens } from '../runs/token-budget.ts';
import type { TurnResult } from '../sessions/session-runner.ts';
import type { ApprovalRecord, RunRecord, SessionRecord } from '../store/records.ts';
import type { StoreView } from '../store/store-view.ts';
import type { StoreFailureError } from '../store/store-failure-error.ts';
import type { Now, NowMs } from '../util/clock.ts';
import type { RecoveryReport } from './recover-runs.ts';

/** The cadre runtime: sessions with a primary agent, runs of subagents, and their lifecycle. */
export interface Cadre {
  /** The runtime's store, read-only: runs change only through the runtime. */
  readonly store: StoreView;
  readonly agents: AgentRegistry;
  readonly limits: Limits;
  /** Hides the configured keys and header values (and known credential shapes) in any text. */
  readonly redactor: SecretRedactor;
  /** This process's identity in run leases. */
  readonly ownerId: string;
  /** Starts a conversation with a primary agent. */
  createSession(options?: { agent?: string; model?: string }): Promise<SessionRecord>;
  /** Sends a user message and runs the primary agent's turn. */
  send(sessionId: string, text: string, options?: { signal?: AbortSignal }): Promise<TurnResult>;
  /**
   * Resolves when the session is idle and none of its runs is queued or running (auto-resumes
   * included). Rejects with the store's {@link StoreFailureError} once the store stopped taking
   * writes: the runtime then stopped every turn and run of this process.
   */
  waitForIdle(sessionId: string, options?: { signal?: AbortSignal }): Promise<void>;
  /** A person's stop of a run (and what it started): `canceled_by_user`, from any process. */
  stopRun(runId: string, options?: { cause?: StopCause; reason?: string }): Promise<RunRecord | null>;
  /** A person's stop of a session: its current turn and every active run. */
  stopSession(sessionId: string): Promise<RunRecord[]>;
  /**
   * What a session has spent: its primary agent's own tokens and its runs' (nested included),
   * against `limits.maxTokensPerSession`. A child session counts as the primary session above it.
   */
  sessionTokens(sessionId: string): Promise<SessionTokens>;
  /**
   * A person's answer to an ask for approval, from this process; answers from other processes
   * (`cadre approve`) reach it through the store. Answers an ask once: a later answer changes nothing.
   */
  approve(approvalId: string, answer: ApprovalAnswer): Promise<AnsweredApproval>;
  /** Asks that wait for an answer (of every process using the store), oldest first. */
  pendingApprovals(options?: { sessionId?: string }): Promise<ApprovalRecord[]>;
  /**
   * Finds runs of dead processes and resumes or abandons them, delivers the notifications they
   * owed, and watches runs that go on elsewhere (on workers) to deliver theirs when they end.
   */
  recover(options?: { sessionId?: string }): Promise<RecoveryReport>;
  /**
   * cadre's delegation tools (`agent`, `agent_parallel`, `agent_list`, `agent_output`,
   * `agent_stop`) for your own AI SDK loop (`generateText`, `streamText`, `ToolLoopAgent`), next to
   * your tools. Their runs belong to `sessionId` (your chat's id; made on first use) and have the
   * whole lifecycle; a foreground `agent` call streams its run's progress as preliminary results.
   * Throws a `ConfigError` unless the app's `ai` package is AI SDK 7.
   * @example
   * const result = streamText({ model, messages, tools: { ...myTools, ...cadre.tools({ sessionId: chatId }) } });
   */
  tools(options: CadreToolsOptions): ToolSet;
  /**
   * The notifications of background runs of an app's session: `take` them into your loop (or let
   * `prepareStep` add them before each step), `ack` once you stored your messages, `wait` while idle.
   * cadre never runs a turn of such a session itself. See {@link CadreNotifications} for the contract.
   */
  notifications(sessionId: string): CadreNotifications;
  /**
   * Writes each run of an app's session as a `data-cadre-run` part (id = run id; agent,
   * description, status, activity, usage, parent_run_id, approval) to a UI message stream writer:
   * first every run's current state, then each change, until no run is active (and `loop` has
   * settled) or `signal` aborts. Answer an ask shown on a card with {@link Cadre.approve}.
   */
  writeRunParts(writer: CadreRunPartWriter, options: WriteRunPartsOptions): Promise<void>;
  /**
   * Live events of this process: all of them, or with `interest` one session's (the session and
   * the child sessions of its runs at any depth, as the dashboard's view of a session shows them).
   * A scoped listener costs nothing for the events of other sessions, so a process holds many
   * views. While anyone listens, model text is streamed (see `streaming`).
   */
  subscribe(listener: CadreListener, interest?: CadreInterest): () => void;
  close(): Promise<void>;
}

/** A runtime and the parts another entry point builds on (a worker carrying out runs for hosts); not public API. */
export interface CadreRuntime {
  cadre: Cadre;
  bus: RunBus;
  runs: RunManager;
  ledger: RunLedger;
  coordination: Coordination;
  ownerId: string;
  now: Now;
  nowMs: NowMs;
  leaseMs: number;
  /**
   * Runs carried out as jobs for a host, with that host's lease owner id: their host announces
   * their end to their parent, and holds their pending notification.
   */
  jobs: Map<string, string | undefined>;
}

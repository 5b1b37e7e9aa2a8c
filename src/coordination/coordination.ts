import type { MessageRecord, RunEventRecord, RunRecord, RunStatus } from '../store/records.ts';
import type { ActivityEventData } from '../store/run-activity.ts';

/**
 * A run event as live views see it: a stored event, or an activity line that is shown but not
 * stored one by one.
 */
export type LiveRunEvent = RunEventRecord | { type: 'activity'; at: string; data: ActivityEventData };

/**
 * What a run's loop shows of its conversation as it goes, beside its run events: its streamed text
 * and the messages it stored (the `text-delta` and `message` events of a process's bus).
 */
export type RunOutputEvent = { type: 'text-delta'; session_id: string; text: string } | { type: 'message'; message: MessageRecord };

/**
 * A signal between the processes that share a store (`cadre run`, `cadre serve`, `cadre stop`,
 * `cadre approve`, workers). The store holds the truth; a signal only says where to look, and
 * may arrive more than once or, on a lossy engine, late: a listener reads the store when it
 * must be sure.
 */
export type CoordinationSignal =
  /** A person or a parent asked the process executing `run_id` (its lease `owner`) to stop it. */
  | { type: 'stop-requested'; run_id: string; owner: string; cause: 'user' | 'parent'; reason: string | null }
  /**
   * A message for `run_id` waits in the store: the process executing it (its lease `owner`) gives
   * it to the subagent before its next model call, or at once with `interrupt`.
   */
  | { type: 'run-message'; run_id: string; owner: string; message_id: string; interrupt: boolean }
  /** A person stopped a session (`cadre stop SESSION_ID`): its turn and runs end. */
  | { type: 'session-stop-requested'; session_id: string; at: string }
  /** An ask for approval was answered, from anywhere. */
  | { type: 'approval-answered'; approval_id: string }
  /** A run reached a finished state. */
  | { type: 'run-ended'; run_id: string; parent_session_id: string; status: RunStatus }
  /** A finished background run waits for its notification to reach its parent session. */
  | { type: 'notification-pending'; run_id: string; parent_session_id: string }
  /** A run's live event, for views of its parent session in other processes (the dashboard). */
  | { type: 'live-event'; parent_session_id: string; run: RunRecord; event: LiveRunEvent }
  /** A model provider answered 429: every process holds its requests to it for `delay_ms`. */
  | { type: 'rate-limited'; provider: string; delay_ms: number }
  /**
   * Someone watches the live views of the process whose lease owner id is `host` (its `stream()`
   * says so): the runs it sent to workers relay their output to it for the next `for_ms`
   * milliseconds (0: no longer). Hosts repeat it while they are watched.
   */
  | { type: 'views-watched'; host: string; for_ms: number }
  /**
   * Output of runs a worker carries out for `host` (the lease owner id of the process that sent
   * them), in order, batched: text deltas of one session that came together are joined.
   */
  | { type: 'run-output'; host: string; events: RunOutputEvent[] };

/** The kinds of {@link CoordinationSignal}. */
export type SignalType = CoordinationSignal['type'];

/** The signal of one kind. */
export type SignalOf<T extends SignalType> = Extract<CoordinationSignal, { type: T }>;

/**
 * What a listener subscribes to within a kind: the lease owner of `stop-requested` and `run-message`, the session
 * of `session-stop-requested`, `notification-pending` and `live-event`, the approval of
 * `approval-answered`, the run of `run-ended`, the provider of `rate-limited`, the host of
 * `views-watched` and `run-output`.
 */
export function signalKey(signal: CoordinationSignal): string {
  switch (signal.type) {
    case 'stop-requested':
    case 'run-message':
      return signal.owner;
    case 'session-stop-requested':
      return signal.session_id;
    case 'approval-answered':
      return signal.approval_id;
    case 'run-ended':
      return signal.run_id;
    case 'notification-pending':
    case 'live-event':
      return signal.parent_session_id;
    case 'rate-limited':
      return signal.provider;
    case 'views-watched':
    case 'run-output':
      return signal.host;
  }
}

/**
 * The one port that carries every signal between processes. The embedded build polls the store
 * (`createPollingCoordination`); Postgres uses LISTEN/NOTIFY and a Redis queue pub/sub. Every
 * engine delivers a signal published in this process to this process's listeners at once.
 */
export interface Coordination {
  /**
   * Announces a signal to every process, this one included. Call it after the store has the
   * change the signal points at. Never throws; failures go to the engine's error report.
   */
  publish(signal: CoordinationSignal): void;
  /**
   * Calls `listener` with signals of `type` for `key` (see {@link signalKey}) until the returned
   * function is called.
   */
  subscribe<T extends SignalType>(type: T, key: string, listener: (signal: SignalOf<T>) => void): () => void;
  close(): Promise<void>;
}

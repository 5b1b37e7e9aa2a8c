import type { RunEventInput } from './run-events.ts';
import type { Coordination } from '../coordination/coordination.ts';
import type { NewRunEvent, RunEventType, RunRecord, RunStatus } from '../store/records.ts';
import { isFinished, isNotificationPending } from '../store/records.ts';
import type { RunPatch, Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import type { RunBus } from './run-bus.ts';
import { notificationAtEnd } from './notification-at-end.ts';

/** Where each state may go. Finished states go nowhere. */
export const legalMoves: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  queued: ['running', 'failed', 'canceled_by_user', 'canceled_by_parent', 'abandoned'],
  running: ['completed', 'completed_empty', 'failed', 'canceled_by_user', 'canceled_by_parent', 'abandoned'],
  completed: [],
  completed_empty: [],
  failed: [],
  canceled_by_user: [],
  canceled_by_parent: [],
  abandoned: [],
};

/** Whether a run may move from `from` to `to`. */
export function canMove(from: RunStatus, to: RunStatus): boolean {
  return legalMoves[from].includes(to);
}

const sourcesOf = new Map<RunStatus, RunStatus[]>();
for (const [from, targets] of Object.entries(legalMoves) as Array<[RunStatus, readonly RunStatus[]]>) {
  for (const to of targets) sourcesOf.set(to, [...(sourcesOf.get(to) ?? []), from]);
}

/** What the ledger needs. */
export interface RunLedgerDeps {
  store: Store;
  bus: RunBus;
  now: Now;
  /** Where the end of a run (and its pending notification) is announced to other processes. */
  coordination?: Coordination;
  /**
   * The trace context of the code starting a run (the tool call's span), stored in its
   * `run-queued` event as `trace` so the run nests there wherever it executes. @default none
   */
  traceContext?: () => Record<string, string> | undefined;
}

/**
 * The one writer of runs: every state change goes through {@link RunLedger.transition}, which
 * checks the move is legal, writes it with its event in one transaction (compare-and-set on the
 * current state, so racing stops and completions cannot both win), then publishes the event.
 */
export interface RunLedger {
  insert(run: RunRecord): Promise<RunRecord>;
  /**
   * Moves a run; null when the run was not in a state that may move to `to` (nothing written).
   * A finished run gets its `ended_at` and gives up its lease; a background one gets its
   * notification, pending (or suppressed), in the same write (see `notificationAtEnd`), held by
   * `holder`: the process that delivers it (for a run a worker carried out, the host that sent it).
   * @param holder @default the run's lease owner
   * @param check a further condition on the run as it stands, inside the compare-and-set (a run
   * does not end while a message waits for it). @default none
   */
  transition(
    runId: string,
    to: RunStatus,
    patch?: RunPatch,
    data?: Record<string, unknown>,
    holder?: string,
    check?: (current: RunRecord) => boolean,
  ): Promise<RunRecord | null>;
  /**
   * Makes an active foreground run background (`promoted_at`, a warning of `kind`), so it
   * notifies its parent when it ends; only while it is active, in one compare-and-set: a run that
   * ended meanwhile keeps what its end decided. Resolves the run as it stands (null if none).
   */
  promote(runId: string, kind: string): Promise<RunRecord | null>;
  /** Changes non-state fields, with an optional event of the given type. */
  update(runId: string, patch: RunPatch, event?: RunEventInput): Promise<RunRecord | null>;
  /**
   * Adds events, with an optional change of non-state fields written in the same call, then
   * publishes each event with the run as it stood then (its `run`, else `run`), except those the
   * caller has `announced` already. An event's `at` defaults to now.
   */
  record(run: RunRecord, events: RecordedEvent[], patch?: RunPatch): Promise<void>;
}

/** An event for {@link RunLedger.record}. */
export interface RecordedEvent {
  type: RunEventType;
  data: Record<string, unknown>;
  at?: string;
  /** The run as it stood when the event happened, for its announcement. */
  run?: RunRecord;
  /** Already published live by the caller: stored only. */
  announced?: boolean;
}

/** Creates the {@link RunLedger}. */
export function createRunLedger({ store, bus, now, coordination, traceContext }: RunLedgerDeps): RunLedger {
  return {
    async insert(run) {
      if (run.status !== 'queued') throw new Error(`A new run starts queued, not ${run.status}`);
      const trace = traceContext?.();
      const event: NewRunEvent = { run_id: run.id, at: run.created_at, type: 'run-queued', data: trace ? { mode: run.mode, trace } : { mode: run.mode } };
      await store.insertRun(run, event);
      bus.publish({ type: 'run-event', run, event: { ...event, seq: event.seq ?? 1 } });
      return run;
    },

    async transition(runId, to, patch = {}, data = {}, holder, check) {
      const from = sourcesOf.get(to) ?? [];
      if (from.length === 0) throw new Error(`No state moves to ${to}`);
      const at = now();
      const finished = isFinished(to);
      const type: RunEventType = to === 'running' ? 'run-start' : 'run-end';
      const fullPatch: RunPatch = { ...patch };
      if (to === 'running') fullPatch.started_at ??= at;
      if (finished) {
        fullPatch.ended_at ??= at;
        // A finished run holds no lease: the lease queries (renewal, stop requests) of a
        // long-lived process then visit its active runs only, not every run it ever ran.
        fullPatch.lease_owner = null;
        fullPatch.lease_expires_at = null;
      }
      const event: NewRunEvent = { run_id: runId, at, type, data: finished ? { status: to, ...data } : data };
      // The notification is decided on the run as it stands at the move (a promotion may just
      // have made it background) and stored pending with its end, so a crash cannot lose it.
      const patchFor = finished
        ? (current: RunRecord) => notificationAtEnd({ ...current, ...fullPatch, lease_owner: holder ?? current.lease_owner }, to)
        : undefined;
      const run = await store.transitionRun({ id: runId, from, to, patch: fullPatch, patchFor, check, event });
      if (run) bus.publish({ type: 'run-event', run, event: { ...event, seq: event.seq ?? 0 } });
      if (run && finished && coordination) {
        coordination.publish({ type: 'run-ended', run_id: run.id, parent_session_id: run.parent_session_id, status: run.status });
        if (isNotificationPending(run)) coordination.publish({ type: 'notification-pending', run_id: run.id, parent_session_id: run.parent_session_id });
      }
      return run;
    },

    async promote(runId, kind) {
      // A queued run may start meanwhile: the move is tried again on the state it reached.
      for (let attempt = 0; attempt < 3; attempt++) {
        const current = await store.getRun(runId);
        if (!current || isFinished(current.status) || current.mode === 'background') return current;
        const at = now();
        const event: NewRunEvent = { run_id: runId, at, type: 'warning', data: { kind } };
        const patch: RunPatch = { mode: 'background', promoted_at: at, warnings: [...current.warnings, { kind, at }] };
        const run = await store.transitionRun({ id: runId, from: [current.status], to: current.status, patch, event });
        if (run) {
          bus.publish({ type: 'run-event', run, event: { ...event, seq: event.seq ?? 0 } });
          return run;
        }
      }
      return store.getRun(runId);
    },

    async update(runId, patch, event) {
      const at = now();
      const events: NewRunEvent[] = event ? [{ run_id: runId, at, type: event.type, data: event.data }] : [];
      const run = await store.updateRun(runId, patch, events);
      if (run && events[0]) bus.publish({ type: 'run-event', run, event: { ...events[0], seq: events[0].seq ?? 0 } });
      return run;
    },

    record(run, events, patch) {
      const at = now();
      const rows: NewRunEvent[] = events.map((event) => ({ run_id: run.id, at: event.at ?? at, type: event.type, data: event.data }));
      // Announced once written, with the seq the store gave them (to no one: not built).
      const announce = (written: unknown) => {
        if (written === false || !bus.heard(run.parent_session_id)) return;
        rows.forEach((row, index) => {
          if (!events[index].announced) bus.publish({ type: 'run-event', run: events[index].run ?? run, event: { ...row, seq: row.seq ?? 0 } });
        });
      };
      return (patch === undefined ? store.appendRunEvents(rows) : store.patchRun(run.id, patch, rows)).then(announce);
    },
  };
}

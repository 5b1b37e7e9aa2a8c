import type { CadreEvent, RunBus } from '../runs/run-bus.ts';
import { activityOf } from './activity-of.ts';
import { isFinished, type ApprovalRecord, type RunRecord, type RunStatus, type Usage } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { listFamilyRuns } from '../runs/family-runs.ts';

/** An ask of a run that waits for a person: answer it with `cadre.approve(id, { decision })`. */
export interface CadreRunApproval {
  id: string;
  tool: string;
  /** One line: the tool and its argument (`bash npm test`). */
  summary: string;
  risk: string;
  created_at: string;
}

/** The `data` of a `data-cadre-run` part: one run as a card shows it. */
export interface CadreRunPartData {
  agent: string;
  description: string;
  status: RunStatus;
  /** The latest activity line (docs/runs-and-limits.md). */
  activity: string | null;
  usage: Usage;
  /** The run that started this one, for runs at depth 2 and more; null for the session's own. */
  parent_run_id: string | null;
  /** The ask this run waits on, if any. */
  approval: CadreRunApproval | null;
  /** The value of a finished run with an `output_schema` (`result.value`); absent otherwise. */
  value?: Record<string, unknown>;
}

/** A UI message stream part for one run; `id` is the run id, so `useChat` updates it in place. */
export interface CadreRunPart {
  type: 'data-cadre-run';
  id: string;
  data: CadreRunPartData;
}

/** What `writeRunParts` writes to: an AI SDK `UIMessageStreamWriter` (from `createUIMessageStream`) fits. */
export interface CadreRunPartWriter {
  write(part: CadreRunPart): void;
}

/** Options of `cadre.writeRunParts`. */
export interface WriteRunPartsOptions {
  /** The app's session (see `cadre.tools`): its runs and the runs they started. */
  sessionId: string;
  /** Stops writing (the page went away); the returned promise then resolves. */
  signal?: AbortSignal;
  /**
   * Your loop's completion (say, `result.consumeStream()`): parts are written at least until it
   * settles, so runs it starts show up live, then until every run has ended. @default none
   */
  loop?: PromiseLike<unknown>;
  /**
   * Which runs the first write covers: `all` of the session's (a page that reconnects), or only
   * the `active` ones (queued or running), so a new answer does not repeat the cards of finished
   * runs an earlier answer showed. Runs that start later are written either way. @default 'all'
   */
  runs?: 'all' | 'active';
  /** Changes of one run within this many milliseconds go out as one part. @default 100 */
  throttleMs?: number;
}

/** What the parts need from the runtime. */
export interface RunPartsServices {
  store: Store;
  bus: RunBus;
}

/**
 * Writes each run of a session (nested runs included) as a `data-cadre-run` part: first the
 * current state of every run (a page that reconnects sees them all), then each change as it
 * happens, until no run is queued or running (and `loop` has settled) or `signal` aborts.
 * It listens on the process's event bus without counting as a watcher, so runs do not switch to
 * streamed model calls because a page is open.
 */
export async function writeRunParts(services: RunPartsServices, writer: CadreRunPartWriter, options: WriteRunPartsOptions): Promise<void> {
  const { store, bus } = services;
  const { sessionId, signal } = options;
  const throttleMs = options.throttleMs ?? 100;
  if (signal?.aborted) return;
  const cards = new Map<string, CadreRunPartData>();
  const family = new Set<string>([sessionId]);
  const dirty = new Set<string>();
  let flushTimer: NodeJS.Timeout | null = null;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  let loopDone = options.loop === undefined;
  let closed = false;
  // Only once the current state is read can "no run is active" be told.
  let ready = false;

  const flush = () => {
    flushTimer = null;
    if (closed) return;
    for (const id of dirty) writer.write({ type: 'data-cadre-run', id, data: cards.get(id)! });
    dirty.clear();
  };
  const touch = (id: string, now = false) => {
    dirty.add(id);
    if (now) {
      if (flushTimer) clearTimeout(flushTimer);
      flush();
    } else flushTimer ??= setTimeout(flush, throttleMs);
  };
  const active = () => [...cards.values()].some((card) => !isFinished(card.status));
  const maybeEnd = () => {
    if (ready && loopDone && !active()) finish();
  };

  const applyRun = (run: RunRecord, activity: string | null) => {
    family.add(run.child_session_id);
    const card = cards.get(run.id);
    // Frequent events carry the record as it was earlier: a finished card never goes back.
    const status = card && isFinished(card.status) ? card.status : run.status;
    const next: CadreRunPartData = {
      agent: run.agent,
      description: run.description,
      status,
      activity: activity ?? card?.activity ?? run.last_activity,
      usage: card && totalOf(card.usage) > totalOf(run.usage) ? card.usage : run.usage,
      parent_run_id: run.parent_run_id,
      approval: isFinished(status) ? null : (card?.approval ?? null),
    };
    const value = run.result?.value ?? card?.value;
    if (value !== undefined) next.value = value;
    cards.set(run.id, next);
    touch(run.id, card?.status !== next.status);
    if (isFinished(next.status)) maybeEnd();
  };

  const applyApproval = (approval: ApprovalRecord) => {
    if (approval.session_id !== sessionId || approval.run_id === null) return;
    const card = cards.get(approval.run_id);
    if (!card) return;
    if (approval.status === 'pending') {
      cards.set(approval.run_id, {
        ...card,
        approval: { id: approval.id, tool: approval.tool, summary: approval.summary, risk: approval.risk, created_at: approval.created_at },
      });
    } else if (card.approval?.id === approval.id) {
      cards.set(approval.run_id, { ...card, approval: null });
    } else return;
    touch(approval.run_id, true);
  };

  // Events that come while the current state is read are applied after it, in order.
  let backlog: CadreEvent[] | null = [];
  const onEvent = (event: CadreEvent) => {
    if (backlog) backlog.push(event);
    else apply(event);
  };
  const apply = (event: CadreEvent) => {
    if (event.type === 'run-event') {
      if (!family.has(event.run.parent_session_id)) return;
      applyRun(event.run, activityOf(event));
    } else if (event.type === 'approval') applyApproval(event.approval);
  };
  const unsubscribe = bus.subscribe(onEvent, { sessionId });
  const onAbort = () => finish();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (const run of await listFamilyRuns(store, sessionId)) {
      bus.follow(onEvent, run.child_session_id);
      if (options.runs !== 'active' || !isFinished(run.status)) applyRun(run, run.last_activity);
    }
    for (const approval of await store.listApprovals({ statuses: ['pending'], session_id: sessionId })) applyApproval(approval);
    for (const event of backlog) apply(event);
    backlog = null;
    flush();
    ready = true;
    options.loop?.then(
      () => ((loopDone = true), maybeEnd()),
      () => ((loopDone = true), maybeEnd()),
    );
    maybeEnd();
    await finished;
  } finally {
    unsubscribe();
    signal?.removeEventListener('abort', onAbort);
    if (flushTimer) clearTimeout(flushTimer);
    if (!signal?.aborted) flush();
    closed = true;
  }
}

function totalOf(usage: Usage): number {
  return usage.input_tokens + usage.output_tokens;
}

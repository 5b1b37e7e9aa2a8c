import type { Coordination } from '../coordination/coordination.ts';
import { createPollingCoordination } from '../coordination/polling-coordination.ts';
import { callOfAsk, compilePermissions, matchRules } from '../permissions/permissions.ts';
import { delegationTool, type PermissionRisk } from '../permissions/permission-rule.ts';
import type { RunBus } from '../runs/run-bus.ts';
import type { RunLedger } from '../runs/run-ledger.ts';
import type { ApprovalPreview, ApprovalRecord, ApprovalResolver, ApprovalStatus } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { NewId, Now } from '../util/clock.ts';
import { alwaysRuleOf, answerApproval, type AnsweredApproval, type ApprovalAnswer } from './answer-approval.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';
import { ConfigError } from '../errors/config-error.ts';

/**
 * What happens to an ask: `ask` a person through the approver (and take an answer from
 * elsewhere too), `wait` for an answer from elsewhere (`cadre approve`, the dashboard, the API),
 * `deny` at once (`by: no_approver`), or approve at once (`yes`, `by: flag`). `ask` and `wait`
 * deny after `timeoutMs` (`by: timeout`).
 */
export type ApprovalMode = 'ask' | 'wait' | 'deny' | 'yes';

/** The approval modes, as flags and options take them. */
export const approvalModes: readonly ApprovalMode[] = ['ask', 'wait', 'deny', 'yes'];

/**
 * Asks a person about one pending ask; `signal` aborts when the ask was answered elsewhere, timed
 * out or its run stopped (then the answer is ignored). Asks come one at a time.
 */
export type Approver = (approval: ApprovalRecord, options: { signal: AbortSignal }) => Promise<ApprovalAnswer>;

/** A tool call that needs a person's approval. */
export interface NewAsk {
  /** The primary session: "always" answers become its rules. */
  sessionId: string;
  runId: string | null;
  agent: string;
  tool: string;
  argument: string | undefined;
  risk: PermissionRisk;
  summary: string;
  /** What the call would do (a diff, a command), secrets redacted. @default none */
  preview?: ApprovalPreview | null;
}

/** Options of {@link createApprovalBroker}. */
export interface ApprovalBrokerOptions {
  store: Store;
  bus: RunBus;
  ledger: RunLedger;
  now: Now;
  newId: NewId;
  ownerId: string;
  /** @default 'ask' with an approver, else 'deny' */
  mode?: ApprovalMode;
  approver?: Approver;
  /** How long an ask waits for an answer before it is denied (`by: timeout`). */
  timeoutMs: number;
  /** How often answers written by other processes are looked for, with the default (polling) coordination. @default 250 */
  pollMs?: number;
  /** Where answers given in any process are announced and heard. @default polling the store */
  coordination?: Coordination;
  onError?: (error: unknown) => void;
}

/** Stores asks, waits for exactly one answer to each, and records both as run events. */
export interface ApprovalBroker {
  readonly mode: ApprovalMode;
  /**
   * Stores an ask and resolves with it once answered (approved, denied, or canceled when `signal`
   * aborts: the run stopped). Never rejects for a missing answer.
   */
  request(ask: NewAsk, signal: AbortSignal): Promise<ApprovalRecord>;
  /**
   * Waits again for an ask stored earlier (a delegation's, after a restart): as {@link request}
   * waits, except that an answer given meanwhile returns at once, the time since the ask was made
   * counts toward the timeout, and no approver missing denies it (`deny` mode waits too).
   * @throws {ConfigError} when there is no such ask.
   */
  resume(id: string, signal: AbortSignal): Promise<ApprovalRecord>;
  /** A person's answer given in this process (library, dashboard, API); wakes the ask at once. */
  answer(id: string, answer: ApprovalAnswer): Promise<AnsweredApproval>;
  /** Asks this process waits for. */
  pending(): ApprovalRecord[];
  /**
   * Shows a pending ask raised by another process (a run this process sent to a worker) to this
   * process's approver, in turn with its own asks; the answer is written here, and the process
   * that raised the ask hears it. Nothing happens unless the mode is `ask` with an approver.
   */
  relay(approval: ApprovalRecord): void;
  close(): void;
}

interface Waiter {
  approval: ApprovalRecord;
  done: (approval: ApprovalRecord) => void;
  /** Aborts the approver's prompt when the ask ends some other way. */
  prompt?: AbortController;
  /** Raised by another process, which records its request and its answer as run events. */
  relayed?: boolean;
  /** Stops waiting without an answer (its timer and listening): an ask on a delegation left for recovery at close. */
  forget?: () => void;
}

/** Creates the {@link ApprovalBroker}. */
export function createApprovalBroker(options: ApprovalBrokerOptions): ApprovalBroker {
  const { store, bus, ledger, now, newId, ownerId, approver } = options;
  const mode: ApprovalMode = options.mode ?? (approver ? 'ask' : 'deny');
  const report = options.onError ?? reportToDefaultLogger;
  const waiters = new Map<string, Waiter>();
  /** Asks waiting for the approver, oldest first; one is shown at a time. */
  const queue: Waiter[] = [];
  let prompting: Waiter | null = null;
  const coordination = options.coordination ?? createPollingCoordination({ store, pollMs: { 'approval-answered': options.pollMs ?? 250 }, onError: report });

  /** Answers written by other processes (`cadre approve`) reach the waiting ask here. */
  function listenForAnswer(id: string): () => void {
    return coordination.subscribe('approval-answered', id, () => {
      if (!waiters.has(id)) return;
      store.getApproval(id).then((stored) => {
        if (stored && stored.status !== 'pending') finish(stored);
      }, report);
    });
  }

  /** Writes an answer if the ask is still pending; whoever wins, the ask ends with the stored answer. */
  async function resolve(id: string, status: Exclude<ApprovalStatus, 'pending'>, by: ApprovalResolver): Promise<void> {
    const won = await store.resolveApproval({ id, status, by, at: now() });
    if (won) coordination.publish({ type: 'approval-answered', approval_id: id });
    const resolved = won ?? (await store.getApproval(id));
    if (resolved && resolved.status !== 'pending') finish(resolved);
  }

  /** Ends an ask once: its waiter, prompt and timers go, and the answer is recorded. */
  function finish(approval: ApprovalRecord): void {
    const waiter = waiters.get(approval.id);
    if (!waiter) return;
    waiters.delete(approval.id);
    const queued = queue.indexOf(waiter);
    if (queued >= 0) queue.splice(queued, 1);
    waiter.prompt?.abort();
    const wasPrompting = prompting === waiter;
    if (wasPrompting) prompting = null;
    (waiter.relayed ? Promise.resolve() : announce(approval)).catch(report).finally(() => waiter.done(approval));
    // An "always" answer may answer queued asks too: they end by rule before the next is shown.
    // The next ask is shown even if the approver never settles the aborted prompt.
    const answered = approval.always ? answerBySessionRules(approval.session_id) : Promise.resolve();
    answered.catch(report).finally(() => {
      if (wasPrompting) pump();
    });
  }

  async function announce(approval: ApprovalRecord): Promise<void> {
    if (approval.status === 'pending') {
      if (approval.run_id !== null)
        await ledger.update(
          approval.run_id,
          {},
          { type: 'approval-request', data: { approval_id: approval.id, tool: approval.tool, summary: approval.summary } },
        );
    } else if (approval.run_id !== null) {
      const decision = approval.status === 'approved' ? 'approved' : 'denied';
      await ledger.update(approval.run_id, {}, { type: 'approval-resolve', data: { approval_id: approval.id, decision, by: approval.resolved_by } });
    }
    bus.publish({ type: 'approval', approval });
  }

  /** After an "always" answer, the session's other waiting asks that its rules now answer end `by: rule`. */
  async function answerBySessionRules(sessionId: string): Promise<void> {
    const rules = compilePermissions(groupRules(await store.listSessionRules(sessionId)), 'session rules');
    for (const waiter of [...waiters.values()]) {
      const { approval } = waiter;
      if (approval.session_id !== sessionId) continue;
      const verdict = matchRules(rules, callOfAsk(approval));
      if (verdict && verdict.decision !== 'ask') await resolve(approval.id, verdict.decision === 'allow' ? 'approved' : 'denied', 'rule');
    }
  }

  /** Shows the oldest waiting ask to the approver, once the previous one is answered. */
  function pump(): void {
    if (prompting !== null || !approver) return;
    const next = queue.shift();
    if (!next) return;
    prompting = next;
    next.prompt = new AbortController();
    const { signal } = next.prompt;
    Promise.resolve()
      .then(() => approver(next.approval, { signal }))
      .then(
        async (answer) => {
          if (!signal.aborted) await answerHere(next.approval.id, answer);
        },
        async () => {
          // A prompt that cannot be shown or answered (the terminal went away) is nobody to ask.
          if (signal.aborted) return;
          await resolve(next.approval.id, 'denied', 'no_approver');
        },
      )
      .catch(report)
      .finally(() => {
        if (prompting !== next) return;
        prompting = null;
        pump();
      });
  }

  /** Waits for an answer from anywhere (and this process's approver in `ask` mode), the timeout or a stop. */
  function awaitAnswer(approval: ApprovalRecord, answered: Promise<ApprovalRecord>, signal: AbortSignal, timeoutMs: number): void {
    const timer = setTimeout(() => resolve(approval.id, 'denied', 'timeout').catch(report), timeoutMs);
    timer.unref();
    const onAbort = () => resolve(approval.id, 'canceled', 'stop').catch(report);
    signal.addEventListener('abort', onAbort, { once: true });
    const stopListening = listenForAnswer(approval.id);
    const forget = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      stopListening();
    };
    answered.finally(forget).catch(report);
    const waiter = waiters.get(approval.id);
    if (waiter) waiter.forget = forget;
    if (mode === 'ask' && waiter) {
      queue.push(waiter);
      pump();
    }
  }

  /** Resolves `done` too when the ask already waited for here ends. */
  function chain(id: string, done: (approval: ApprovalRecord) => void): void {
    const waiter = waiters.get(id)!;
    const first = waiter.done;
    waiter.done = (approval) => {
      first(approval);
      done(approval);
    };
  }

  async function answerHere(id: string, answer: ApprovalAnswer): Promise<AnsweredApproval> {
    const answered = await answerApproval(store, id, answer, now);
    if (answered.changed) coordination.publish({ type: 'approval-answered', approval_id: id });
    if (answered.approval.status !== 'pending') finish(answered.approval);
    return answered;
  }

  return {
    mode,

    async request(ask, signal) {
      const approval: ApprovalRecord = {
        id: newId('apr'),
        session_id: ask.sessionId,
        run_id: ask.runId,
        agent: ask.agent,
        tool: ask.tool,
        argument: ask.argument ?? null,
        risk: ask.risk,
        summary: ask.summary,
        status: 'pending',
        created_at: now(),
        resolved_at: null,
        resolved_by: null,
        always: false,
        owner: ownerId,
        preview: ask.preview ?? null,
      };
      await store.insertApproval(approval);
      // Committed before anyone sees it: a person may answer it from another process at once, and
      // after a crash the call it asks about (stored before it) is in the transcript.
      await store.flush();
      await announce(approval);
      const answered = new Promise<ApprovalRecord>((done) => waiters.set(approval.id, { approval, done }));
      if (signal.aborted) await resolve(approval.id, 'canceled', 'stop');
      else if (mode === 'yes') await resolve(approval.id, 'approved', 'flag');
      else if (mode === 'deny' || (mode === 'ask' && !approver)) await resolve(approval.id, 'denied', 'no_approver');
      else awaitAnswer(approval, answered, signal, options.timeoutMs);
      return answered;
    },

    async resume(id, signal) {
      const stored = await store.getApproval(id);
      if (!stored) throw new ConfigError(`No approval '${id}'.`);
      if (stored.status !== 'pending' || waiters.has(id)) return stored.status !== 'pending' ? stored : new Promise((done) => chain(id, done));
      const answered = new Promise<ApprovalRecord>((done) => waiters.set(id, { approval: stored, done }));
      // Time spent before the restart counts: the ask was made when it was stored.
      const waited = Math.max(0, Date.parse(now()) - Date.parse(stored.created_at));
      if (signal.aborted) await resolve(id, 'canceled', 'stop');
      else if (mode === 'yes') await resolve(id, 'approved', 'flag');
      else awaitAnswer(stored, answered, signal, Math.max(0, options.timeoutMs - waited));
      return answered;
    },

    answer(id, answer) {
      return answerHere(id, answer);
    },

    pending() {
      return [...waiters.values()].filter((waiter) => !waiter.relayed).map((waiter) => waiter.approval);
    },

    relay(approval) {
      if (mode !== 'ask' || !approver || approval.status !== 'pending' || waiters.has(approval.id)) return;
      const waiter: Waiter = { approval, done: () => stopListening(), relayed: true };
      waiters.set(approval.id, waiter);
      const stopListening = listenForAnswer(approval.id);
      queue.push(waiter);
      pump();
    },

    close() {
      if (!options.coordination) coordination.close().catch(report);
      for (const waiter of waiters.values()) waiter.prompt?.abort();
      // An ask on a delegation stays pending for whoever recovers its run: nothing here answers it any more.
      for (const [id, waiter] of waiters) {
        if (waiter.approval.tool !== delegationTool || waiter.relayed) continue;
        waiter.forget?.();
        waiters.delete(id);
      }
    },
  };
}

/** Session rules as a permissions object, for {@link compilePermissions}. */
export function groupRules(rules: ReadonlyArray<{ rule: string; decision: 'allow' | 'deny' }>): { allow: string[]; deny: string[] } {
  return {
    allow: rules.filter((rule) => rule.decision === 'allow').map((rule) => rule.rule),
    deny: rules.filter((rule) => rule.decision === 'deny').map((rule) => rule.rule),
  };
}

export { alwaysRuleOf };

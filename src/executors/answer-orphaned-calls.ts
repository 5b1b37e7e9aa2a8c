import type { ToolResultPart } from 'ai';
import { isFinished, type MessageRecord, type RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import { probeOwner } from '../util/owner-liveness.ts';
import { pendingCallKey, withoutMark } from './tool-call-journal.ts';
import { unfinishedCallResult, type StoredToolCall } from './unfinished-call-result.ts';

/** The warning kind of a foreground run promoted because the process whose call waited for it died. */
export const callerGoneWarning = 'caller_gone';

/** Options of {@link answerOrphanedCalls}. */
export interface AnswerOrphanedCallsOptions {
  store: Store;
  sessionId: string;
  now: Now;
  /**
   * A process on another host is presumed dead once its calls are older than this and none of
   * the runs they started is still leased by it. @default 15000
   */
  leaseMs?: number;
  /** The session's messages, when the caller has just read them. */
  messages?: readonly MessageRecord[];
  /**
   * Runs the caller holds and whose loops are not running (runs it just claimed, the run it is
   * about to execute): the unmarked calls of their child sessions are orphaned. @default none
   */
  takenOver?: Iterable<string>;
  /**
   * Makes a foreground run background while it is active (see `RunLedger.promote`), resolving it
   * as it stands. A foreground run whose waiting call is answered here while it still works is
   * promoted first: nobody waits for it any more, so it notifies its parent when it ends, and the
   * answer says so. @default runs are described as they are
   */
  promote?: (run: RunRecord) => Promise<RunRecord | null>;
}

/**
 * Crash survival of transcripts: gives every tool call of a dead process that has no result one
 * (for a delegation, the runs it started and where each stands; for anything else, that the
 * process stopped before the call finished and it may have run), right after the call's message,
 * so a provider that checks each call is answered (Anthropic, OpenAI) accepts the transcript.
 * Calls of a live process (its step is under way) are left alone. Resolves true when anything
 * was written.
 */
export async function answerOrphanedCalls(options: AnswerOrphanedCallsOptions): Promise<boolean> {
  const { store, sessionId, now } = options;
  const messages = options.messages ?? (await store.listMessages(sessionId));
  const answered = new Set<string>();
  for (const message of messages) for (const part of partsOf(message)) if (part.type === 'tool-result') answered.add(part.toolCallId as string);
  let runs: RunRecord[] | undefined;
  let unmarkedOrphaned: boolean | undefined;
  let wrote = false;
  for (const [index, message] of messages.entries()) {
    if (message.role !== 'assistant') continue;
    const calls = partsOf(message).filter((part): part is StoredToolCall & Record<string, unknown> => part.type === 'tool-call');
    const open = calls.filter((call) => !answered.has(call.toolCallId));
    const marked = calls.some((call) => call.providerOptions?.[pendingCallKey]);
    if (open.length === 0 && !marked) continue;
    runs ??= await store.listRuns({ parent_session_id: sessionId });
    const dead =
      markOf(calls) === undefined
        ? (unmarkedOrphaned ??= await unmarkedCallsOrphaned(store, sessionId, new Set(options.takenOver), now()))
        : ownerIsDead(calls, message, runs, now(), options.leaseMs ?? 15_000);
    if (!dead) continue;
    if (options.promote) runs = await promoteWaitedFor(open, runs, options.promote);
    const next = messages[index + 1];
    const results = open.map((call) => unfinishedCallResult(call, 'process-died', runs!));
    let rewrite = marked;
    let content = partsOf(message).map((part) => (part.type === 'tool-call' ? withoutMark(part as unknown as StoredToolCall) : part));
    if (results.length > 0 && next === undefined) {
      await store.appendMessages([{ session_id: sessionId, role: 'tool', content: results, created_at: now() }]);
    } else if (results.length > 0 && next.role === 'tool') {
      await store.updateMessageContent(sessionId, next.seq, [...partsOf(next), ...results]);
    } else if (results.length > 0) {
      // Something was stored after the calls (a message of an older cadre): a result cannot go
      // between them, so the unanswered calls stay in the transcript as text.
      const orphaned = new Map(results.map((result) => [result.toolCallId, result]));
      content = content.map((part) =>
        orphaned.has(part.toolCallId as string) ? asText(part as unknown as StoredToolCall, orphaned.get(part.toolCallId as string)!) : part,
      );
      rewrite = true;
    }
    // Unmarked calls answered after their message are left as stored.
    if (rewrite) await store.updateMessageContent(sessionId, message.seq, content);
    wrote = true;
  }
  return wrote;
}

/**
 * The runs with the foreground runs the open calls wait for made background, or as they ended
 * meanwhile: the process that waited for them died, so they become promoted runs.
 */
async function promoteWaitedFor(
  open: readonly StoredToolCall[],
  runs: RunRecord[],
  promote: (run: RunRecord) => Promise<RunRecord | null>,
): Promise<RunRecord[]> {
  const ids = new Set(open.map((call) => call.toolCallId));
  return Promise.all(
    runs.map(async (run) => (ids.has(run.tool_call_id ?? '') && run.mode === 'foreground' && !isFinished(run.status) ? ((await promote(run)) ?? run) : run)),
  );
}

type Part = Record<string, unknown> & { type: string; toolCallId?: string };

function partsOf(message: MessageRecord): Part[] {
  return Array.isArray(message.content) ? (message.content as Part[]) : [];
}

/** The process a stored call under way names (see `createToolCallJournal`), if any of `calls` is marked. */
function markOf(calls: readonly StoredToolCall[]): string | undefined {
  for (const call of calls) {
    const owner = call.providerOptions?.[pendingCallKey]?.pending_owner;
    if (typeof owner === 'string') return owner;
  }
  return undefined;
}

/**
 * Whether calls stored without a mark in session `sessionId` are left by a loop that is over.
 * In a primary session they were stored with their step, which has ended. A run's child session
 * stores its calls unmarked (see `markCalls` of the journal): the run on it says who runs them,
 * so they are orphaned unless a run of the session is active under a live lease that the caller
 * has not taken over (its owner is alive on this host, or, on another host, its lease has not
 * expired).
 */
async function unmarkedCallsOrphaned(store: Store, sessionId: string, takenOver: ReadonlySet<string>, at: string): Promise<boolean> {
  const session = await store.getSession(sessionId);
  if (session?.parent_run_id == null) return true;
  // Every run on a child session (the first and its resumptions) has the first run's parent session.
  const first = await store.getRun(session.parent_run_id);
  if (first === null) return true;
  const active = await store.listRuns({ parent_session_id: first.parent_session_id, statuses: ['queued', 'running'] });
  return !active.some((run) => run.child_session_id === sessionId && !takenOver.has(run.id) && leaseIsLive(run, at));
}

/** Whether a run's lease holder still runs it: alive on this host, or on another with its lease not expired. */
function leaseIsLive(run: RunRecord, at: string): boolean {
  if (run.lease_owner === null) return false;
  const probe = probeOwner(run.lease_owner);
  if (probe !== 'unknown') return probe === 'alive';
  return run.lease_expires_at !== null && run.lease_expires_at > at;
}

/**
 * Whether the process that stored these marked calls is gone: a mark names a process of this host
 * (checked at once) or of another (presumed gone once the calls are older than a lease and it
 * leases none of their runs).
 */
function ownerIsDead(calls: readonly StoredToolCall[], message: MessageRecord, runs: readonly RunRecord[], at: string, leaseMs: number): boolean {
  const owner = markOf(calls);
  if (owner === undefined) return true;
  const probe = probeOwner(owner);
  if (probe !== 'unknown') return probe === 'gone';
  if (Date.parse(message.created_at) + leaseMs > Date.parse(at)) return false;
  const ids = new Set(calls.map((call) => call.toolCallId));
  return !runs.some((run) => ids.has(run.tool_call_id ?? '') && run.lease_owner === owner && run.lease_expires_at !== null && run.lease_expires_at > at);
}

function asText(call: StoredToolCall, result: ToolResultPart): { type: 'text'; text: string } {
  const value = result.output.type === 'text' ? result.output.value : '';
  return { type: 'text', text: `[Call ${call.toolCallId} of ${call.toolName} with ${JSON.stringify(call.input)}] ${value}` };
}

import type { ModelMessage } from 'ai';
import type { StartingToolCall, ToolCallOutcome, ToolCallRecorder } from '../loop/record-tool-calls.ts';
import type { MessageRecord, NewMessage } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { toolInfo } from '../tools/define-tool.ts';
import type { Now } from '../util/clock.ts';
import { settledCallResult, unfinishedCallResult, type StoredToolCall, type UnfinishedReason } from './unfinished-call-result.ts';

/** Where a stored call names the process it is running in while its step is under way. */
export const pendingCallKey = 'cadre';

/** Options of {@link createToolCallJournal}. */
export interface ToolCallJournalOptions {
  store: Store;
  /** The session whose transcript the calls belong to. */
  sessionId: string;
  /** This process's identity in leases: a stored call under way names it until its step ends. */
  ownerId: string;
  /**
   * Whether stored calls name their process until their step ends. A run's child session needs no
   * mark: the run's lease says who runs its calls (see `answerOrphanedCalls`), so a step whose
   * stored calls already are its whole message is not written again at its end.
   * @default true
   */
  markCalls?: boolean;
  now: Now;
  /**
   * Appends the message that keeps a step's first calls, after the messages of earlier steps
   * still held (in one write, so they keep their order). @default `store.appendMessages`
   */
  appendCalls?: (message: NewMessage) => Promise<MessageRecord>;
}

/** The rows a finished step writes once some of its calls were stored as they started. */
export interface StepRows {
  /** The step's messages to append (its tool results, or everything when no call was stored). */
  append: ModelMessage[];
  /** The stored message that kept the calls, rewritten as the step's whole assistant message. */
  rewrite: MessageRecord | null;
  /**
   * The stored message that kept the calls when it already is the step's whole assistant message
   * (unmarked calls and nothing else): nothing to write, only to announce with the step's messages.
   */
  kept?: MessageRecord | null;
}

/**
 * A loop's tool calls, each stored in its session's transcript before it runs: the first call of
 * a step appends an assistant message holding it, later calls join that message, and at the
 * step's end the message becomes the step's whole assistant message (text and every call, none
 * twice; a message of unmarked calls that already is that is left as stored). A call under way
 * names its process (unless `markCalls` is off: a run's lease names it), so recovery can tell a
 * dead process's calls from a live one's. A loop that ends mid-step gives each call it stored a
 * result.
 */
export interface ToolCallJournal extends ToolCallRecorder {
  /** What the step's messages become in the store; call it before writing them. */
  endStep(messages: readonly ModelMessage[]): Promise<StepRows>;
  /**
   * Stores a result for every call of an unfinished step (the loop was stopped or failed, or a
   * message interrupted it: `reason`). @param reason @default 'loop-ended'
   */
  finish(reason?: Extract<UnfinishedReason, 'loop-ended' | 'interrupted'>): Promise<MessageRecord[]>;
}

/** Creates a {@link ToolCallJournal}. */
export function createToolCallJournal(options: ToolCallJournalOptions): ToolCallJournal {
  const { store, sessionId, ownerId, now } = options;
  const mark = options.markCalls === false ? undefined : { [pendingCallKey]: { pending_owner: ownerId } };
  let stored: MessageRecord | null = null;
  let calls: StoredToolCall[] = [];
  const outcomes = new Map<string, ToolCallOutcome>();
  /** Writes of the step in order: a call joins the message only once the message exists. */
  let writes: Promise<unknown> = Promise.resolve();
  /** Calls recorded and not yet taken by a write, and the write that will take them. */
  let waiting: StoredToolCall[] = [];
  let waitingMustCommit = false;
  let nextWrite: Promise<void> | null = null;

  const reset = () => {
    stored = null;
    calls = [];
    outcomes.clear();
  };

  /**
   * Stores every call recorded since the last write in one write: the first of a step appends
   * the assistant message, later ones rewrite it with the calls so far. Calls that arrive while
   * a write is under way wait for the next, so a step whose calls start together (the AI SDK
   * runs a step's calls at once) costs two writes however many calls it makes, not one rewrite
   * of the whole message per call.
   */
  async function writeWaiting(): Promise<void> {
    nextWrite = null;
    const taken = waiting;
    const mustCommit = waitingMustCommit;
    waiting = [];
    waitingMustCommit = false;
    calls.push(...taken);
    if (stored === null) {
      const message: NewMessage = { session_id: sessionId, role: 'assistant', content: [...calls], created_at: now() };
      stored = options.appendCalls ? await options.appendCalls(message) : (await store.appendMessages([message]))[0];
    } else {
      await store.updateMessageContent(sessionId, stored.seq, [...calls]);
      stored = { ...stored, content: [...calls] };
    }
    // Committed, not only acknowledged: a call of the batch may act outside the store at once.
    if (mustCommit) await store.flush();
  }

  return {
    record(call: StartingToolCall, tool: object) {
      // A call that can act outside the store (write, exec, network, or a tool cadre knows nothing
      // of) waits for the commit. A read-only call (delegation included: the runs it starts are
      // rows written after the call's, and commits keep the order of writes and never hold part
      // of one) runs once the write is acknowledged: a crash loses both together or neither.
      const info = toolInfo(tool);
      waiting.push(mark ? { type: 'tool-call', ...call, providerOptions: mark } : { type: 'tool-call', ...call });
      waitingMustCommit ||= info === undefined || info.risk !== 'read';
      if (nextWrite === null) {
        const write = writes.then(writeWaiting);
        writes = write.catch(() => {});
        nextWrite = write;
      }
      // The call runs once the write that holds it is done.
      return nextWrite;
    },

    settled(toolCallId, outcome) {
      outcomes.set(toolCallId, outcome);
    },

    async endStep(messages) {
      await writes;
      const [first, ...rest] = messages;
      if (stored === null || first?.role !== 'assistant') {
        reset();
        return { append: [...messages], rewrite: null };
      }
      if (mark === undefined && isStoredAsIs(first.content, calls)) {
        const kept = stored;
        reset();
        return { append: rest, rewrite: null, kept };
      }
      const content: Array<{ type: string; toolCallId?: string }> =
        typeof first.content === 'string' ? [{ type: 'text', text: first.content } as { type: string }] : [...first.content];
      const present = new Set(content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])));
      for (const call of calls) if (!present.has(call.toolCallId)) content.push(withoutMark(call));
      const rewrite: MessageRecord = { ...stored, content };
      reset();
      return { append: rest, rewrite };
    },

    async finish(reason = 'loop-ended') {
      await writes;
      if (stored === null) return [];
      const message = stored;
      const unfinished = calls;
      const known = new Map(outcomes);
      reset();
      const runs = unfinished.some((call) => !known.has(call.toolCallId)) ? await store.listRuns({ parent_session_id: sessionId }) : [];
      const results = unfinished.map((call) => {
        const outcome = known.get(call.toolCallId);
        // A call that failed as a message interrupted it failed because of the interrupt: its result says so.
        if (outcome && !(reason === 'interrupted' && !outcome.ok)) return settledCallResult(call, outcome);
        return unfinishedCallResult(call, reason, runs);
      });
      // Results first: a call stays marked as under way until it has its result.
      const appended = await store.appendMessages([{ session_id: sessionId, role: 'tool', content: results, created_at: now() }]);
      if (mark === undefined) return [message, ...appended];
      const content = unfinished.map(withoutMark);
      await store.updateMessageContent(sessionId, message.seq, content);
      return [{ ...message, content }, ...appended];
    },
  };
}

/**
 * Whether a step's assistant content is exactly the unmarked calls as stored (same calls in the
 * same order, nothing else): the message as stored already reads as the step's whole message.
 */
function isStoredAsIs(content: ModelMessage['content'], calls: readonly StoredToolCall[]): boolean {
  if (typeof content === 'string' || content.length !== calls.length) return false;
  for (let index = 0; index < calls.length; index++) {
    const part = content[index] as unknown as Record<string, unknown>;
    const call = calls[index];
    if (part.type !== 'tool-call' || part.toolCallId !== call.toolCallId || part.toolName !== call.toolName) return false;
    if (part.input !== call.input && JSON.stringify(part.input) !== JSON.stringify(call.input)) return false;
    for (const key in part) if (part[key] !== undefined && key !== 'type' && key !== 'toolCallId' && key !== 'toolName' && key !== 'input') return false;
  }
  return true;
}

/** A stored call without the mark of a call under way. */
export function withoutMark(call: StoredToolCall): StoredToolCall {
  if (!call.providerOptions?.[pendingCallKey]) return call;
  const { [pendingCallKey]: _mark, ...providerOptions } = call.providerOptions;
  const { providerOptions: _options, ...rest } = call;
  return Object.keys(providerOptions).length > 0 ? { ...rest, providerOptions } : rest;
}

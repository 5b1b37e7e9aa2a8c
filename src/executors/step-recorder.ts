import type { ModelMessage } from 'ai';
import type { MessageRecord, NewMessage } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import { toNewMessages } from './message-codec.ts';
import type { ToolCallJournal } from './tool-call-journal.ts';

/** Options of {@link createStepRecorder}. */
export interface StepRecorderOptions {
  store: Pick<Store, 'appendMessages' | 'updateMessageContent'>;
  /** The session whose transcript the steps extend (a primary session, or a run's child session). */
  sessionId: string;
  /** The journal of the loop's tool calls: calls stored as they started are rewritten with their steps. */
  journal: Pick<ToolCallJournal, 'endStep' | 'finish'>;
  now: Now;
  /** Announces messages once stored, in transcript order. */
  publish: (messages: readonly MessageRecord[]) => void;
}

/**
 * Stores the steps of one agent loop in its session's transcript, for primary turns and runs
 * alike: a step's messages are held when it ends (`endStep`) and written by `flush`, after the
 * calls the journal stored as they started, whose message is rewritten as the step's whole
 * assistant message; then every message of the step is announced in order. A primary turn flushes
 * each step before its next; a run holds them to write them with the step's events (one commit).
 */
export interface StepRecorder {
  /** Holds a finished step's messages, once the calls it stored as they started are written. */
  endStep(messages: readonly ModelMessage[]): Promise<void>;
  /** Whether steps are held for the next `flush`. */
  holding(): boolean;
  /** Writes the held steps and announces them; undefined when nothing was held. */
  flush(): Promise<void> | undefined;
  /**
   * Writes the held steps' messages and then `message` in one append (the message that keeps the
   * next step's first calls), and announces the steps'; resolves with `message` as stored.
   */
  flushWith(message: NewMessage): Promise<MessageRecord>;
  /** Stores a result for every call of a step that never ended (stopped, failed), and announces it. */
  finish(reason?: 'loop-ended' | 'interrupted'): Promise<void>;
}

/** Creates the {@link StepRecorder} of one loop. */
export function createStepRecorder(options: StepRecorderOptions): StepRecorder {
  const { store, sessionId, journal, now, publish } = options;
  let messages: NewMessage[] = [];
  /** Stored calls' messages to rewrite as their steps' whole assistant messages, after the results. */
  let rewrites: MessageRecord[] = [];
  /** Stored calls' messages that already are their steps' whole assistant messages: announced with the step. */
  let kept: MessageRecord[] = [];

  /** Appends `held` (and `next`, last), rewrites `rewritten`, announces the steps' messages; resolves with `next` as stored. */
  async function write(held: NewMessage[], rewritten: MessageRecord[], unchanged: MessageRecord[], next?: NewMessage): Promise<MessageRecord | undefined> {
    // The results go first: until the calls' message is rewritten, they count as under way.
    const stored = await store.appendMessages(next ? [...held, next] : held);
    const appended = next ? stored.pop() : undefined;
    for (const rewrite of rewritten) await store.updateMessageContent(rewrite.session_id, rewrite.seq, rewrite.content);
    publish(unchanged.length + rewritten.length === 0 ? stored : [...unchanged, ...rewritten, ...stored].sort((a, b) => a.seq - b.seq));
    return appended;
  }

  return {
    async endStep(stepMessages) {
      const rows = await journal.endStep(stepMessages);
      messages.push(...toNewMessages(sessionId, rows.append, now()));
      if (rows.rewrite) rewrites.push(rows.rewrite);
      else if (rows.kept) kept.push(rows.kept);
    },
    holding() {
      return messages.length > 0 || rewrites.length > 0 || kept.length > 0;
    },
    flush() {
      const [held, rewritten, unchanged] = [messages, rewrites, kept];
      [messages, rewrites, kept] = [[], [], []];
      if (held.length > 0 || rewritten.length > 0) return write(held, rewritten, unchanged) as Promise<unknown> as Promise<void>;
      if (unchanged.length > 0) publish(unchanged);
      return undefined;
    },
    flushWith(message) {
      const [held, rewritten, unchanged] = [messages, rewrites, kept];
      [messages, rewrites, kept] = [[], [], []];
      return write(held, rewritten, unchanged, message) as Promise<MessageRecord>;
    },
    async finish(reason) {
      publish(await journal.finish(reason));
    },
  };
}

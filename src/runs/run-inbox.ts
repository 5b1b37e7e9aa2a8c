import type { Coordination } from '../coordination/coordination.ts';
import { CadreError } from '../errors/cadre-error.ts';
import { NotFoundError } from '../errors/not-found-error.ts';
import type { NewRunEvent, RunMessage, RunMessageSender, RunRecord } from '../store/records.ts';
import { hasPendingMessages, isFinished } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { NewId, Now } from '../util/clock.ts';
import { ownerIsGone } from '../util/owner-liveness.ts';
import type { RunBus } from './run-bus.ts';

/** What the inbox of runs needs. */
export interface RunInboxDeps {
  store: Pick<Store, 'getRun' | 'transitionRun' | 'listMessages' | 'commitMessage'>;
  bus: RunBus;
  now: Now;
  newId: NewId;
  /** Where the run's process hears of the message (as it hears of a stop). @default not announced */
  coordination?: Pick<Coordination, 'publish'>;
}

/** A message for a run, as its parent or a person sends it. */
export interface RunMessageInput {
  runId: string;
  text: string;
  from: RunMessageSender;
  /** Abort the model call and tool calls under way first. @default false */
  interrupt?: boolean;
}

/**
 * What became of a message: added to a queued run's task, stored for a running run (with whether
 * the process that runs it can be reached now), or not taken because the run has finished (its
 * sender starts a follow-up run instead).
 */
export type RunMessageReceipt =
  | { kind: 'queued'; run: RunRecord; message: RunMessage }
  | { kind: 'running'; run: RunRecord; message: RunMessage; reachable: boolean }
  | { kind: 'finished'; run: RunRecord };

/** A message that is empty or white space: nothing is stored. */
export class EmptyRunMessageError extends CadreError {
  constructor() {
    super('CadreEmptyRunMessageError', 'message: must not be empty. Say what the subagent should do next.');
  }

  static override isInstance(error: unknown): error is EmptyRunMessageError {
    return CadreError.isInstance(error) && error.name === 'CadreEmptyRunMessageError';
  }
}

/** The marker a person's message starts with, as the subagent reads it. */
export const personMarker = '(from a person) ';

/** The text the subagent reads for a message: a person's starts with {@link personMarker}. */
export function messageText(message: Pick<RunMessage, 'from' | 'text'>): string {
  return message.from === 'person' ? `${personMarker}${message.text}` : message.text;
}

/** The heading a message to a queued run goes under in its task. */
export function messageHeading(from: RunMessageSender): string {
  return from === 'person' ? '## Message from a person' : '## Message from parent';
}

/**
 * Stores a message for a run before anything acknowledges it. To a queued run it joins the task
 * (the run's `task` and the child session's message that carries it, in one commit); to a running
 * run it waits in the run's `messages`, with its `message-in` event, and the process that runs the
 * run is told (`run-message`). Each is a compare-and-set on the run's state: a run that moved
 * meanwhile is looked at again. A finished run takes nothing.
 */
export async function sendRunMessage(deps: RunInboxDeps, input: RunMessageInput): Promise<RunMessageReceipt> {
  const text = input.text.trim();
  if (text === '') throw new EmptyRunMessageError();
  const interrupt = input.interrupt ?? false;
  const id = deps.newId('msg');
  for (let attempt = 0; attempt < 10; attempt++) {
    const current = await deps.store.getRun(input.runId);
    if (!current) throw new NotFoundError('run', input.runId);
    if (isFinished(current.status)) return { kind: 'finished', run: current };
    const at = deps.now();
    const message: RunMessage = { id, from: input.from, text, interrupt, sent_at: at, delivered_at: null, delivered_to: null };
    const event: NewRunEvent = { run_id: current.id, at, type: 'message-in', data: { from: input.from, interrupt, message_id: id } };
    if (current.status === 'queued') {
      const receipt = await addToTask(deps, current, { ...message, delivered_at: at, delivered_to: 'task' }, event);
      if (receipt) return receipt;
      continue;
    }
    const run = await deps.store.transitionRun({
      id: current.id,
      from: ['running'],
      to: 'running',
      patchFor: (stored) => ({ messages: [...(stored.messages ?? []), message] }),
      event,
    });
    if (!run) continue;
    deps.bus.publish({ type: 'run-event', run, event: { ...event, seq: event.seq ?? 0 } });
    const reachable = run.lease_owner !== null && run.lease_expires_at !== null && run.lease_expires_at > at && !ownerIsGone(run.lease_owner);
    if (run.lease_owner !== null) deps.coordination?.publish({ type: 'run-message', run_id: run.id, owner: run.lease_owner, message_id: id, interrupt });
    return { kind: 'running', run, message, reachable };
  }
  throw new Error(`Run ${input.runId} kept changing state; the message was not stored. Send it again.`);
}

/** Adds a message to a queued run's task; null when the run left `queued` (or got another message) meanwhile. */
async function addToTask(deps: RunInboxDeps, current: RunRecord, message: RunMessage, event: NewRunEvent): Promise<RunMessageReceipt | null> {
  const section = `\n\n${messageHeading(message.from)}\n\n${message.text}`;
  // The run's task is the child session's last message until the run starts.
  const last = (await deps.store.listMessages(current.child_session_id)).at(-1);
  const known = current.messages?.length ?? 0;
  const check = (stored: RunRecord) => stored.status === 'queued' && (stored.messages?.length ?? 0) === known;
  const runs = [{ id: current.id, check, patch: { task: current.task + section, messages: [...(current.messages ?? []), message] }, events: () => [event] }];
  const result =
    last?.role === 'user'
      ? await deps.store.commitMessage({
          session_id: current.child_session_id,
          seq: last.seq,
          role: 'user',
          content: withSection(last.content, section),
          created_at: last.created_at,
          runs,
        })
      : await deps.store.commitMessage({ session_id: current.child_session_id, role: 'user', content: section.trimStart(), created_at: deps.now(), runs });
  const changed = result.runs[0];
  if (!changed) return null;
  for (const stored of changed.events) deps.bus.publish({ type: 'run-event', run: changed.run, event: stored });
  if (result.message) deps.bus.publish({ type: 'message', message: result.message });
  return { kind: 'queued', run: changed.run, message };
}

/** A user message's content with a section added at its end (text, or the text part of a list of parts). */
function withSection(content: unknown, section: string): unknown {
  if (typeof content === 'string') return content + section;
  if (Array.isArray(content)) return [...content, { type: 'text', text: section.trimStart() }];
  return section.trimStart();
}

/** A message delivered to a run's subagent: the text it reads as a user message. */
export interface DeliveredMessage {
  id: string;
  from: RunMessageSender;
  interrupt: boolean;
  /** The text as the subagent reads it (a person's with its marker). */
  text: string;
}

/**
 * Delivers the messages waiting for a running run, in the order sent: each is appended to the
 * child session's transcript as a user message in the same commit that marks it delivered (with its
 * `message-deliver` event), so it reaches the subagent exactly once, whichever process delivers it.
 * Returns what was delivered, in order.
 */
export async function deliverRunMessages(deps: Omit<RunInboxDeps, 'coordination' | 'newId'>, runId: string): Promise<DeliveredMessage[]> {
  const delivered: DeliveredMessage[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    const run = await deps.store.getRun(runId);
    if (!run || run.status !== 'running' || !hasPendingMessages(run)) return delivered;
    const messages = run.messages!;
    const index = messages.findIndex((message) => message.delivered_at === null);
    const message = messages[index];
    const at = deps.now();
    const marked = messages.map((each, place) => (place === index ? { ...each, delivered_at: at, delivered_to: 'transcript' as const } : each));
    const text = messageText(message);
    const result = await deps.store.commitMessage({
      session_id: run.child_session_id,
      role: 'user',
      content: text,
      created_at: at,
      runs: [
        {
          id: run.id,
          // Nothing arrived or was delivered meanwhile: the marks are laid over the list as read.
          check: (stored) =>
            stored.status === 'running' && (stored.messages?.length ?? 0) === messages.length && stored.messages?.[index]?.delivered_at === null,
          patch: { messages: marked },
          events: (stored) => [{ run_id: run.id, at, type: 'message-deliver', data: { message_id: message.id, message_seq: stored.seq } }],
        },
      ],
    });
    const changed = result.runs[0];
    if (!changed) continue;
    if (result.message) deps.bus.publish({ type: 'message', message: result.message });
    for (const event of changed.events) deps.bus.publish({ type: 'run-event', run: changed.run, event });
    delivered.push({ id: message.id, from: message.from, interrupt: message.interrupt, text });
  }
  return delivered;
}

/** The messages of a run that wait, and those delivered, for lists and outputs. */
export function messageCounts(run: Pick<RunRecord, 'messages'>): { pending: number; delivered: number } {
  const messages = run.messages ?? [];
  const pending = messages.filter((message) => message.delivered_at === null).length;
  return { pending, delivered: messages.length - pending };
}

/** Whether a run has messages waiting (re-exported for the manager's end check). */
export { hasPendingMessages };

import { z } from 'zod';
import { CadreError } from '../errors/cadre-error.ts';
import { runStatuses, type RunEventRecord, type RunEventType } from '../store/records.ts';

/*
 * The events of a run (docs/runs-and-limits.md) as one typed union, checked with zod: each type's
 * `data` has the fields its writers store. Objects are loose: an event may carry more (an older
 * or newer writer), never less. The store keeps events as `RunEventRecord` (its `data` untyped);
 * a reader that shows them parses them here rather than guessing with `data.label ?? data.text`.
 */

const text = z.string();
const count = z.number().int().nonnegative();

/** The `data` of each run event type. */
export const runEventDataSchemas = {
  'run-queued': z.looseObject({ mode: z.enum(['foreground', 'background']), trace: z.record(z.string(), z.string()).optional() }),
  'run-start': z.looseObject({}),
  'step-start': z.looseObject({ step: count }),
  'tool-call-start': z.looseObject({ tool: text, label: text }),
  'tool-call-end': z.looseObject({ tool: text, ok: z.boolean() }),
  /** The typed activity (`kind` and its fields) beside its rendered `text`; events stored before activity was typed have `text` only. */
  activity: z.looseObject({ text, kind: text.optional() }),
  warning: z.looseObject({ kind: text }),
  'run-end': z.looseObject({ status: z.enum(runStatuses) }),
  'notification-deliver': z.looseObject({ session_id: text, message_seq: count }),
  'result-consume': z.looseObject({ via: text }),
  'approval-request': z.looseObject({ approval_id: text, tool: text, summary: text }),
  'approval-resolve': z.looseObject({
    approval_id: text,
    decision: z.enum(['approved', 'denied']),
    // The approval record's resolver, which its type allows to be null; an answered ask has one.
    by: z.enum(['person', 'rule', 'flag', 'no_approver', 'timeout', 'stop']).nullable(),
  }),
  /** `error` says why a summary failed (`summary_length` 0 then). */
  summary: z.looseObject({ original_length: count, summary_length: count, error: text.nullable().optional() }),
  /** A message sent to the run once it started (its `message_id` names it in the run's `messages`). */
  'message-in': z.looseObject({ from: z.enum(['parent', 'person']), interrupt: z.boolean(), message_id: text.optional() }),
  /** A message sent to the run reached its subagent: the `seq` of the child session's message that carries it. */
  'message-deliver': z.looseObject({ message_id: text, message_seq: count }),
} satisfies Record<RunEventType, z.ZodType>;

const envelope = { run_id: text, seq: z.number().int(), at: text };
const member = <T extends RunEventType>(type: T) => z.object({ ...envelope, type: z.literal(type), data: runEventDataSchemas[type] });

/** A stored run event whose `data` fits its `type`. */
export const runEventSchema = z.discriminatedUnion('type', [
  member('run-queued'),
  member('run-start'),
  member('step-start'),
  member('tool-call-start'),
  member('tool-call-end'),
  member('activity'),
  member('warning'),
  member('run-end'),
  member('notification-deliver'),
  member('result-consume'),
  member('approval-request'),
  member('approval-resolve'),
  member('summary'),
  member('message-in'),
  member('message-deliver'),
]);

/** A run event, typed: `event.type === 'tool-call-start'` makes `event.data.label` a string. */
export type RunEvent = z.infer<typeof runEventSchema>;

/** The `data` of a run event of type `T`. */
export type RunEventData<T extends RunEventType> = z.infer<(typeof runEventDataSchemas)[T]>;

/** An event as a writer gives it to the ledger: its type and the `data` that type has. */
export type RunEventInput = { [T in RunEventType]: { type: T; data: RunEventData<T> } }[RunEventType];

/** A run event that does not fit its type (a writer stored other fields). */
export class RunEventDataError extends CadreError {
  readonly event: Pick<RunEventRecord, 'run_id' | 'seq' | 'type'>;

  constructor(event: Pick<RunEventRecord, 'run_id' | 'seq' | 'type'>, problem: string) {
    super('CadreRunEventDataError', `Event ${event.seq} (${event.type}) of run ${event.run_id} does not fit its type: ${problem}`);
    this.event = { run_id: event.run_id, seq: event.seq, type: event.type };
  }

  static override isInstance(error: unknown): error is RunEventDataError {
    return CadreError.isInstance(error) && error.name === 'CadreRunEventDataError';
  }
}

/**
 * Checks a stored event against {@link runEventSchema}: the typed event, or a
 * {@link RunEventDataError} saying which field is wrong.
 */
export function parseRunEvent(record: RunEventRecord): RunEvent {
  const parsed = runEventSchema.safeParse(record);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new RunEventDataError(record, `${issue?.path.join('.') || 'event'}: ${issue?.message ?? 'invalid'}`);
}

/** The detail of one event on a line (`cadre show`, `agent_output`): what it says beyond its type. */
export function describeRunEvent(event: RunEvent): string {
  switch (event.type) {
    case 'tool-call-start':
      return event.data.label || event.data.tool;
    case 'tool-call-end':
      return `${event.data.tool} ${event.data.ok ? 'ok' : 'failed'}`;
    case 'activity':
      return event.data.text;
    case 'run-end':
      return event.data.status;
    case 'warning':
      return event.data.kind;
    case 'step-start':
      return `step ${event.data.step}`;
    case 'approval-request':
      return event.data.summary;
    case 'approval-resolve':
      return `${event.data.decision} by ${event.data.by}`;
    case 'notification-deliver':
      return `message ${event.data.message_seq}`;
    case 'result-consume':
      return `via ${event.data.via}`;
    case 'summary':
      return `${event.data.original_length} -> ${event.data.summary_length} characters`;
    case 'run-queued':
      return event.data.mode;
    case 'run-start':
      return '';
    case 'message-deliver':
      return `message ${event.data.message_seq}`;
    case 'message-in':
      return `from ${event.data.from === 'person' ? 'a person' : 'the parent'}${event.data.interrupt ? ', interrupting' : ''}`;
  }
}

/** {@link describeRunEvent} of a stored event; one that does not fit its type shows its fields as `key=value`. */
export function describeStoredRunEvent(record: RunEventRecord): string {
  const parsed = runEventSchema.safeParse(record);
  if (parsed.success) return describeRunEvent(parsed.data);
  return Object.entries(record.data)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
}

import { oneLine } from './markdown-text.ts';
import type { ActivityEventData, RunActivity, RunActivityKind } from './records.ts';

export type { ActivityEventData, RunActivity, RunActivityKind } from './records.ts';

/** The longest an activity line may be. */
export const maxActivityLength = 80;

/** Collapses white space and cuts a line to `maxActivityLength` characters with an ellipsis. */
export function clampActivity(text: string, max = maxActivityLength): string {
  // Only the start can show; a long result need not be rewritten whole.
  const line = oneLine(text.length > max * 8 ? text.trimStart().slice(0, max * 8) : text);
  if (line.length <= max) return line;
  const cut = line.slice(0, max - 1);
  // Never half a surrogate pair: a high surrogate cut off from its partner goes too.
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

/** The one-line (≤ 80 characters) text of an activity, as docs/runs-and-limits.md words it. */
export function renderActivity(activity: RunActivity): string {
  switch (activity.kind) {
    case 'queued':
      return 'queued';
    case 'waiting_for_slot':
      return 'waiting for a slot';
    case 'waiting_for_model':
      return 'waiting for model';
    case 'tool':
      return clampActivity(withArgument(activity.tool, activity.argument));
    case 'text':
      return clampActivity(activity.text);
    case 'summarizing':
      return `summarizing ${activity.characters} characters`;
    case 'awaiting_approval':
      return clampActivity(`awaiting approval: ${withArgument(activity.tool, activity.argument)}`);
    case 'denied':
      return clampActivity(`denied: ${withArgument(activity.tool, activity.argument)}`);
    case 'finished':
      return clampActivity(activity.detail === undefined || activity.detail.trim() === '' ? activity.status : `${activity.status}: ${activity.detail}`);
  }
}

function withArgument(tool: string, argument: string | undefined): string {
  return argument === undefined || argument === '' ? tool : `${tool} ${argument}`;
}

/** The `activity` event's data: the typed value and its text. */
export function activityEventData(activity: RunActivity): ActivityEventData {
  return { ...activity, text: renderActivity(activity) };
}

/** The typed value an `activity` event carries; an event stored before (`{text}` only) reads as text. */
export function activityOfEventData(data: Record<string, unknown>): RunActivity | null {
  const { text, ...fields } = data;
  if (isRunActivity(fields)) return fields;
  return typeof text === 'string' ? { kind: 'text', text } : null;
}

/** How the store keeps an activity in the `last_activity` column: its JSON. */
export function encodeActivity(activity: RunActivity | null): string | null {
  return activity === null ? null : JSON.stringify(activity);
}

/**
 * The activity a stored `last_activity` value holds: the JSON of a typed value, or (a row stored
 * before activity was typed, or any value that is not one) its text.
 */
export function decodeActivity(stored: string | null): RunActivity | null {
  if (stored === null) return null;
  if (stored.startsWith('{"kind":')) {
    try {
      const value: unknown = JSON.parse(stored);
      if (isRunActivity(value)) return value;
    } catch {
      // Text that only looks like JSON: read as text below.
    }
  }
  return { kind: 'text', text: stored };
}

const string = (value: unknown) => typeof value === 'string';
const optionalString = (value: unknown) => value === undefined || typeof value === 'string';
const fieldChecks: { [Kind in RunActivityKind]: Record<string, (value: unknown) => boolean> } = {
  queued: {},
  waiting_for_slot: {},
  waiting_for_model: {},
  tool: { tool: string, argument: optionalString },
  text: { text: string },
  summarizing: { characters: (value) => typeof value === 'number' },
  awaiting_approval: { tool: string, argument: optionalString },
  denied: { tool: string, argument: optionalString, by: string },
  finished: { status: string, detail: optionalString },
};

/** Whether a value is a {@link RunActivity}: a known kind with exactly its fields. */
export function isRunActivity(value: unknown): value is RunActivity {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  const checks = typeof record.kind === 'string' && Object.hasOwn(fieldChecks, record.kind) ? fieldChecks[record.kind as RunActivityKind] : undefined;
  if (checks === undefined) return false;
  for (const key of Object.keys(record)) if (key !== 'kind' && !Object.hasOwn(checks, key)) return false;
  return Object.entries(checks).every(([key, check]) => check(record[key]));
}

import type { NewRunEvent } from '../records.ts';
import type { RunPatch } from '../store.ts';
import { patchColumns } from './record-rows.ts';
import { patchableRunColumns, runSqlColumn, runValueToSql, type StoredValue } from './run-rows.ts';

/** A field a run patch sets: its name, the column it is kept in, its value as given and as stored. */
export interface RunField {
  field: string;
  column: string;
  value: unknown;
  stored: StoredValue;
}

/** A change to one run, checked and encoded before anything is held or sent. */
export interface CheckedRunChange {
  fields: RunField[];
  /** Each event's data as stored (JSON), in order. */
  data: string[];
}

/** The error of an event passed with another run's change. */
export function mismatchedEvent(runId: string, event: NewRunEvent): TypeError {
  return new TypeError(`An event of run '${event.run_id}' was passed with run '${runId}'.`);
}

/** Each event's data as stored (JSON), checking that every event belongs to `runId` when given. */
export function encodeEvents(runId: string | null, events: readonly NewRunEvent[]): string[] {
  return events.map((event) => {
    if (runId !== null && event.run_id !== runId) throw mismatchedEvent(runId, event);
    return JSON.stringify(event.data ?? {});
  });
}

/** The fields a run patch sets, checked and encoded: status never, unknown fields never. */
export function runFields(patch: RunPatch): RunField[] {
  if ((patch as { status?: unknown }).status !== undefined) {
    throw new TypeError("A run patch cannot change 'status': use transitionRun, which checks the move and writes its event.");
  }
  return patchColumns(patch, patchableRunColumns, 'A run patch').map((field) => {
    const value = patch[field as keyof RunPatch];
    return { field, column: runSqlColumn(field), value, stored: runValueToSql(field, value) };
  });
}

/** A change of run `id`: its patch's fields and its events' data, checked (events of `id` only) and encoded. */
export function checkRunChange(id: string, patch: RunPatch, events: readonly NewRunEvent[]): CheckedRunChange {
  return { data: encodeEvents(id, events), fields: runFields(patch) };
}

/**
 * The prelude of every write of both stores: `check` validates and encodes the call; a bad call
 * is rejected (never thrown, and nothing held or sent), a good one goes on to `then`.
 *
 * @example
 * return whenValid(() => checkRunChange(id, patch, events), ({ fields, data }) => write(...));
 */
export function whenValid<C, T>(check: () => C, then: (checked: C) => Promise<T>): Promise<T> {
  let checked: C;
  try {
    checked = check();
  } catch (error) {
    return Promise.reject(error);
  }
  return then(checked);
}

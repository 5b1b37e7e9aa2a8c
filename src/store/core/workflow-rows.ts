import type { WorkflowRecord } from '../records.ts';
import type { WorkflowPatch } from '../store.ts';
import { patchColumns } from './record-rows.ts';
import type { StoredValue } from './run-rows.ts';

/** Every column of `workflows`, in the order {@link workflowToRow} gives their values. */
export const workflowColumns = [
  'id',
  'name',
  'status',
  'session_id',
  'parent_run_id',
  'depth',
  'input',
  'output',
  'error',
  'phases',
  'log',
  'source',
  'max_runs',
  'created_at',
  'updated_at',
  'ended_at',
  'lease_owner',
  'lease_expires_at',
  'stop_requested_at',
] as const satisfies ReadonlyArray<keyof WorkflowRecord>;

/** The columns as one list, for SELECT and RETURNING. */
export const workflowColumnList = workflowColumns.join(', ');

const jsonColumns: ReadonlySet<string> = new Set(['input', 'output', 'error', 'phases', 'log', 'source']);
/** Columns kept NOT NULL as JSON: an absent value is stored as `null`. */
const requiredJson: ReadonlySet<string> = new Set(['input', 'output', 'phases', 'log', 'source']);

const patchable: ReadonlySet<string> = new Set([
  'status',
  'output',
  'error',
  'phases',
  'log',
  'updated_at',
  'ended_at',
  'lease_owner',
  'lease_expires_at',
  'stop_requested_at',
]);

/** A workflow field as stored (either engine). */
export function workflowValueToSql(column: string, value: unknown): StoredValue {
  if (jsonColumns.has(column)) {
    if (value === undefined || value === null) return requiredJson.has(column) ? 'null' : null;
    return JSON.stringify(value);
  }
  return (value ?? null) as StoredValue;
}

/** The values of a workflow for an insert, in {@link workflowColumns} order. */
export function workflowToRow(workflow: WorkflowRecord): StoredValue[] {
  return workflowColumns.map((column) => workflowValueToSql(column, workflow[column]));
}

/** The columns a patch sets with their stored values; a field no patch may set is a TypeError. */
export function workflowPatchFields(patch: WorkflowPatch): Array<{ column: string; stored: StoredValue }> {
  return patchColumns(patch, patchable, 'A workflow patch').map((column) => ({
    column,
    stored: workflowValueToSql(column, patch[column as keyof WorkflowPatch]),
  }));
}

/** A `workflows` row (an object by column) as a record. */
export function workflowFromRow(row: Record<string, unknown>): WorkflowRecord {
  const record: Record<string, unknown> = {};
  for (const column of workflowColumns) {
    const value = row[column];
    if (jsonColumns.has(column)) record[column] = value === null || value === undefined ? null : JSON.parse(value as string);
    else if (column === 'depth' || column === 'max_runs') record[column] = value === null || value === undefined ? null : Number(value);
    else record[column] = value ?? null;
  }
  record.phases ??= [];
  record.log ??= [];
  return record as unknown as WorkflowRecord;
}

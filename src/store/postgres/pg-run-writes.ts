import type pg from 'pg';
import type { NewRunEvent, RunRecord } from '../records.ts';
import type { RunPatch } from '../store.ts';
import { patchColumns, patchableRunColumns, runColumnList, runColumns, runFromRow, runSqlColumn, runValueToSql } from '../sqlite/rows.ts';

/** Names a statement by its text (see `createStatementNames`). */
export type NameStatement = (query: { text: string; values: unknown[] }) => pg.QueryConfig;

/** A changed column of `runs` with its value as stored. */
export interface RunField {
  column: string;
  sql: unknown;
}

/** Each event's data as stored (JSON), checking that every event belongs to `runId` when given. */
export function encodeEvents(runId: string | null, events: readonly NewRunEvent[]): string[] {
  return events.map((event) => {
    if (runId !== null && event.run_id !== runId) throw new TypeError(`An event of run '${event.run_id}' was passed with run '${runId}'.`);
    return JSON.stringify(event.data ?? {});
  });
}

/** The fields a run patch sets, checked and encoded: status never, unknown fields never. */
export function runFields(patch: RunPatch): RunField[] {
  if ((patch as { status?: unknown }).status !== undefined) {
    throw new TypeError("A run patch cannot change 'status': use transitionRun, which checks the move and writes its event.");
  }
  return patchColumns(patch, patchableRunColumns, 'A run patch').map((column) => ({ column: runSqlColumn(column), sql: runValueToSql(column, patch[column as keyof RunPatch]) }));
}

/** Indexes of `items` by a key, in order. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  items.forEach((item, index) => {
    const list = groups.get(key(item));
    if (list) list.push(index);
    else groups.set(key(item), [index]);
  });
  return groups;
}

/**
 * Appends rows with the next seq of their key (a run's events, a session's messages), in order,
 * in one statement: seq = the stored maximum + the row's place. For keys whose last seq this
 * process does not know. Another process taking the same seq meanwhile makes the write fail with
 * a unique violation, which the batch retries.
 */
export function appendWithSeq(
  client: pg.ClientBase,
  name: NameStatement,
  table: 'run_events' | 'messages',
  key: string,
  rows: ReadonlyArray<readonly [string, string, string]>,
): Promise<number[]> {
  const [keyColumn, columns] = table === 'run_events' ? ['run_id', ['at', 'type', 'data']] : ['session_id', ['role', 'content', 'created_at']];
  const text = `INSERT INTO ${table} (${keyColumn}, seq, ${columns.join(', ')})
     SELECT $1, last.seq + added.ord, added.${columns[0]}, added.${columns[1]}, added.${columns[2]}
     FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM ${table} WHERE ${keyColumn} = $1) last,
          unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS added(${columns.join(', ')}, ord)
     RETURNING seq`;
  const values = [key, rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2])];
  return client.query<{ seq: number }>(name({ text, values })).then(({ rows: inserted }) => inserted.map((row) => row.seq).sort((a, b) => a - b));
}

/** What {@link changeRun} wrote: the run as it is now (null if no run matched) and the seqs of its events. */
export interface ChangedRun {
  run: RunRecord | null;
  seqs: number[];
}

/**
 * Changes one run and appends its events in one statement: the events are written only if the
 * run matched (`guard`, e.g. its status), each with the next seq after the stored ones. With no
 * fields the run is locked and read (`FOR UPDATE`). Resolves with the run as changed.
 */
export function changeRun(
  client: pg.ClientBase,
  name: NameStatement,
  change: { id: string; fields: readonly RunField[]; guard?: { sql: string; value: unknown }; events: readonly NewRunEvent[]; data: readonly string[] },
): Promise<ChangedRun> {
  const values: unknown[] = [change.id];
  const parameter = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const guard = change.guard ? ` AND ${change.guard.sql.replace('?', parameter(change.guard.value))}` : '';
  const sets = change.fields.map((field) => `${field.column} = ${parameter(field.sql)}`).join(', ');
  const changed =
    sets === ''
      ? `SELECT ${runColumnList} FROM runs WHERE id = $1${guard} FOR UPDATE`
      : `UPDATE runs SET ${sets} WHERE id = $1${guard} RETURNING ${runColumnList}`;
  let text: string;
  if (change.events.length === 0) {
    text = `WITH changed AS (${changed}) SELECT *, ARRAY[]::int[] AS event_seqs FROM changed`;
  } else {
    const at = parameter(change.events.map((event) => event.at));
    const type = parameter(change.events.map((event) => event.type));
    const data = parameter(change.data);
    text = `WITH changed AS (${changed}),
      added AS (INSERT INTO run_events (run_id, seq, at, type, data)
        SELECT $1, last.seq + event.ord, event.at, event.type, event.data
        FROM (SELECT count(*) AS found FROM changed) matched,
             (SELECT COALESCE(MAX(seq), 0) AS seq FROM run_events WHERE run_id = $1) last,
             unnest(${at}::text[], ${type}::text[], ${data}::text[]) WITH ORDINALITY AS event(at, type, data, ord)
        WHERE matched.found > 0
        RETURNING seq)
      SELECT *, ARRAY(SELECT seq FROM added ORDER BY seq) AS event_seqs FROM changed`;
  }
  return client.query({ ...name({ text, values }), rowMode: 'array' }).then(({ rows }) => {
    const row = rows[0] as unknown[] | undefined;
    if (!row) return { run: null, seqs: [] };
    return { run: runFromRow(row), seqs: row[runColumns.length] as number[] };
  });
}

/** Reads runs and locks them for the rest of the transaction, by id. */
export function lockRuns(client: pg.ClientBase, name: NameStatement, ids: readonly string[]): Promise<Map<string, RunRecord>> {
  return client
    .query({ ...name({ text: `SELECT ${runColumnList} FROM runs WHERE id = ANY($1) ORDER BY id FOR UPDATE`, values: [ids] }), rowMode: 'array' })
    .then(({ rows }) => new Map((rows as unknown[][]).map((row) => [row[0] as string, runFromRow(row)])));
}

/** Inserts a run with its first event, unless a run with its id is stored; resolves with the event's seq, or null. */
export function insertRunRow(client: pg.ClientBase, name: NameStatement, values: readonly unknown[], event: NewRunEvent, data: string): Promise<number | null> {
  const count = runColumns.length;
  const text = `WITH inserted AS (INSERT INTO runs (${runColumnList}) VALUES (${runColumns.map((_, index) => `$${index + 1}`).join(', ')}) ON CONFLICT (id) DO NOTHING RETURNING id)
    INSERT INTO run_events (run_id, seq, at, type, data)
    SELECT inserted.id, COALESCE((SELECT MAX(seq) FROM run_events WHERE run_id = inserted.id), 0) + 1, $${count + 1}, $${count + 2}, $${count + 3} FROM inserted
    RETURNING seq`;
  return client.query<{ seq: number }>(name({ text, values: [...values, event.at, event.type, data] })).then(({ rows }) => rows[0]?.seq ?? null);
}

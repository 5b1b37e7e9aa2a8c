import type pg from 'pg';
import type { NewRunEvent, RunRecord } from '../records.ts';
import type { RunField } from '../core/run-fields.ts';
import { copyRun, integerColumns as integerRunColumns, runColumnList, runColumns, runFromRow, runToSql } from '../core/run-rows.ts';
import type { PgMergeable } from './pg-outbox.ts';

/** Names a statement by its text (see `createStatementNames`). */
export type NameStatement = (query: { text: string; values: unknown[] }) => pg.QueryConfig;

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
  table: 'run_event_rows' | 'messages',
  key: string,
  rows: ReadonlyArray<readonly [string, string, string]>,
): Promise<number[]> {
  const [keyColumn, columns] = table === 'run_event_rows' ? ['run_id', ['at', 'type', 'data']] : ['session_id', ['role', 'content', 'created_at']];
  const text = `INSERT INTO ${table} (${keyColumn}, seq, ${columns.join(', ')})
     SELECT $1, last.seq + added.ord, added.${columns[0]}, added.${columns[1]}, added.${columns[2]}
     FROM (SELECT ${table === 'run_event_rows' ? lastEventSeq('$1') : 'COALESCE((SELECT MAX(seq) FROM messages WHERE session_id = $1), 0)'} AS seq) last,
          unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS added(${columns.join(', ')}, ord)
     RETURNING seq`;
  const values = [key, rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2])];
  return client.query<{ seq: number }>(name({ text, values })).then(({ rows: inserted }) => inserted.map((row) => row.seq).sort((a, b) => a - b));
}

/**
 * The last event seq stored for run `runId` (an SQL expression), or 0: the last row's `last_seq`
 * when it holds several events (see `packedEventArrays`), else its `seq`.
 */
export function lastEventSeq(runId: string): string {
  return `COALESCE((SELECT COALESCE(last_seq, seq) FROM run_event_rows WHERE run_id = ${runId} ORDER BY seq DESC LIMIT 1), 0)`;
}

/** The row a known run is expected to be, as stored (see `RunChange.expected`). */
export function expectedRow(run: RunRecord): unknown[] {
  return runToSql(run) as unknown[];
}

/** What {@link changeRunOp} wrote: the run as it is now (null if no run matched) and the seqs of its events. */
export interface ChangedRun {
  run: RunRecord | null;
  seqs: number[];
}

/** A change of one run: its fields, the statuses it may be in (none: any), and events to append if it matched. */
export interface RunChange {
  id: string;
  fields: readonly RunField[];
  allowed?: readonly string[];
  /** The whole row as it must be stored for the change to apply (`runColumns` order, as stored). */
  expected?: readonly unknown[];
  events: readonly NewRunEvent[];
  data: readonly string[];
}

/**
 * The columns of `runs` for RETURNING, in `runColumns` order; those in `set` come back empty,
 * their values being the ones just written (a result is not sent back to this process).
 */
const runColumnsOf = (table: string) => runColumns.map((column) => `${table}.${column}`).join(', ');

const returnedColumns = (set: ReadonlySet<string>) =>
  runColumns.map((column) => (set.has(column) ? `NULL::${integerRunColumns.has(column) ? 'int' : 'text'} AS ${column}` : `runs.${column}`)).join(', ');

/**
 * Changes runs and appends their events in one statement, for changes of one shape (the same
 * columns, a guard or none, events or none): each run's events are written only if it matched
 * (`allowed` holds its status), each with the next seq after the stored ones. With no fields the
 * runs are locked and read (`FOR UPDATE`). A change with `expected` applies only to a row stored
 * exactly so. Each change gets its run as changed. A run appears in one change of a statement at
 * most (`row`).
 */
export function changeRunOp(change: RunChange): PgMergeable<RunChange, ChangedRun> {
  const columns = change.fields.map((field) => field.column);
  const guarded = change.allowed !== undefined;
  const expecting = change.expected !== undefined;
  const withEvents = change.events.length > 0;
  return {
    key: `run-change:${columns.join(',')}:${guarded ? 'guarded' : 'any'}:${expecting ? 'expected' : 'any'}:${withEvents ? 'events' : 'none'}`,
    row: change.id,
    input: change,
    build(changes) {
      const values: unknown[] = [changes.map((each) => each.id)];
      const parameter = (value: unknown, type: string) => {
        values.push(value);
        return `$${values.length}::${type}[]`;
      };
      const arrays = ['$1::text[]'];
      const names = ['id'];
      if (guarded) {
        arrays.push(
          parameter(
            changes.map((each) => each.allowed!.join(',')),
            'text',
          ),
        );
        names.push('allowed');
      }
      columns.forEach((column, index) => {
        arrays.push(
          parameter(
            changes.map((each) => each.fields[index].stored ?? null),
            integerRunColumns.has(column) ? 'int' : 'text',
          ),
        );
        names.push(`c${index}`);
      });
      if (expecting) {
        runColumns.forEach((column, index) => {
          arrays.push(
            parameter(
              changes.map((each) => each.expected![index] ?? null),
              integerRunColumns.has(column) ? 'int' : 'text',
            ),
          );
          names.push(`e${index}`);
        });
      }
      let guard = guarded ? " AND runs.status = ANY(string_to_array(input.allowed, ','))" : '';
      if (expecting) guard += ` AND (${runColumnsOf('runs')}) IS NOT DISTINCT FROM (${runColumns.map((_, index) => `input.e${index}`).join(', ')})`;
      const input = `unnest(${arrays.join(', ')}) AS input(${names.join(', ')})`;
      const changed =
        columns.length === 0
          ? `SELECT ${returnedColumns(new Set())} FROM runs JOIN ${input} ON runs.id = input.id${guard} ORDER BY runs.id FOR UPDATE OF runs`
          : `UPDATE runs SET ${columns.map((column, index) => `${column} = input.c${index}`).join(', ')} FROM ${input} WHERE runs.id = input.id${guard} RETURNING ${returnedColumns(new Set(columns))}`;
      if (!withEvents) return { text: `WITH changed AS (${changed}) SELECT *, ARRAY[]::int[] AS event_seqs FROM changed`, values, rowMode: 'array' };
      const events = changes.flatMap((each) => each.events.map((event, index) => ({ event, index, data: each.data[index] })));
      const eventArrays = [
        parameter(
          events.map(({ event }) => event.run_id),
          'text',
        ),
        parameter(
          events.map(({ index }) => index + 1),
          'int',
        ),
        parameter(
          events.map(({ event }) => event.at),
          'text',
        ),
        parameter(
          events.map(({ event }) => event.type),
          'text',
        ),
        parameter(
          events.map(({ data }) => data),
          'text',
        ),
      ];
      const text = `WITH changed AS (${changed}),
        added AS (INSERT INTO run_event_rows (run_id, seq, at, type, data)
          SELECT event.run_id, last.seq + event.ord, event.at, event.type, event.data
          FROM unnest(${eventArrays.join(', ')}) AS event(run_id, ord, at, type, data)
          JOIN changed ON changed.id = event.run_id
          CROSS JOIN LATERAL (SELECT ${lastEventSeq('event.run_id')} AS seq) last
          RETURNING run_id, seq)
        SELECT changed.*, ARRAY(SELECT seq FROM added WHERE added.run_id = changed.id ORDER BY seq) AS event_seqs FROM changed`;
      return { text, values, rowMode: 'array' };
    },
    split(rows: readonly unknown[][], changes) {
      const byId = new Map(rows.map((row) => [row[0] as string, row]));
      const places = columns.map((column) => runColumns.indexOf(column as (typeof runColumns)[number]));
      return changes.map((each) => {
        const row = byId.get(each.id);
        if (!row) return { run: null, seqs: [] };
        each.fields.forEach((field, index) => (row[places[index]] = field.stored ?? null));
        return { run: runFromRow(row), seqs: row[runColumns.length] as number[] };
      });
    },
  };
}

/** Reads runs and locks them for the rest of the transaction, by id (the locks of one batch in one statement). */
export function lockRunsOp(ids: readonly string[]): PgMergeable<readonly string[], Map<string, RunRecord>> {
  return {
    key: 'run-lock',
    input: ids,
    build: (inputs) => ({
      text: `SELECT ${runColumnList} FROM runs WHERE id = ANY($1) ORDER BY id FOR UPDATE`,
      values: [[...new Set(inputs.flat())]],
      rowMode: 'array',
    }),
    split(rows: readonly unknown[][], inputs) {
      const runs = new Map(rows.map((row) => [row[0] as string, runFromRow(row)]));
      return inputs.map((wanted) => new Map(wanted.flatMap((id) => (runs.has(id) ? [[id, copyRun(runs.get(id)!)] as const] : []))));
    },
  };
}

/** A new run and its first event. */
export interface NewRunRow {
  values: readonly unknown[];
  event: NewRunEvent;
  data: string;
}

/**
 * Inserts runs with their first events, each unless a run with its id is stored; each gets its
 * event's seq, or null when its id was taken.
 */
export function insertRunOp(row: NewRunRow): PgMergeable<NewRunRow, number | null> {
  return {
    key: 'run-insert',
    row: row.values[0] as string,
    input: row,
    build(rows) {
      const arrays = runColumns.map((column, index) => `$${index + 1}::${integerRunColumns.has(column) ? 'int' : 'text'}[]`);
      const count = runColumns.length;
      const text = `WITH inserted AS (INSERT INTO runs (${runColumnList}) SELECT * FROM unnest(${arrays.join(', ')}) ON CONFLICT (id) DO NOTHING RETURNING id)
        INSERT INTO run_event_rows (run_id, seq, at, type, data)
        SELECT inserted.id, ${lastEventSeq('inserted.id')} + 1, event.at, event.type, event.data
        FROM inserted JOIN unnest($${count + 1}::text[], $${count + 2}::text[], $${count + 3}::text[], $${count + 4}::text[]) AS event(run_id, at, type, data) ON event.run_id = inserted.id
        RETURNING run_id, seq`;
      const values: unknown[] = runColumns.map((_, index) => rows.map((each) => each.values[index] ?? null));
      values.push(
        rows.map((each) => each.values[0]),
        rows.map((each) => each.event.at),
        rows.map((each) => each.event.type),
        rows.map((each) => each.data),
      );
      return { text, values };
    },
    split(rows: ReadonlyArray<{ run_id: string; seq: number }>, inputs) {
      const seqs = new Map(rows.map((row) => [row.run_id, row.seq]));
      // The same id twice in one statement: the first one got it.
      return inputs.map((each) => {
        const id = each.values[0] as string;
        const seq = seqs.get(id) ?? null;
        seqs.delete(id);
        return seq;
      });
    },
  };
}

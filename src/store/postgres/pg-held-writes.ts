import type { QueryConfig } from 'pg';
import { arrayParameterTypes, pgBinaryArray, type ArrayElementType } from './pg-binary-array.ts';
import { integerColumns } from '../core/run-rows.ts';
import { createHeldRows, moveHeldPast, packEvents, type HeldEvent, type HeldMessage, type HeldRow, type HeldRows } from '../core/held-rows.ts';

/**
 * Writes acknowledged before their commit and written together, in one statement, by the next
 * transaction: appended events and messages (held rows of the write-behind core, see
 * `store/core/held-rows.ts`), rewritten message contents, changed run fields. A segment holds
 * only writes that need nothing read back (their seq comes from the process's counter, their run
 * is known to exist), so it commits as one multi-row statement.
 */
export interface HeldSegment {
  readonly events: HeldRows<HeldEvent>;
  readonly messages: HeldRows<HeldMessage>;
  /** New contents of messages stored before this segment, by session and seq: [session, seq, content]. */
  readonly contents: Map<string, [string, number, string]>;
  /** Changed fields of runs stored before this segment, by run: column -> value as stored. */
  readonly runs: Map<string, Map<string, unknown>>;
  /** Changed fields of sessions stored before this segment, and tokens to add to their usage. */
  readonly sessions: Map<string, HeldSession>;
}

/** What a segment changes in one session. */
export interface HeldSession {
  fields: Map<string, unknown>;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

/** An empty segment. */
export function createHeldSegment(): HeldSegment {
  return { events: createHeldRows(), messages: createHeldRows(), contents: new Map(), runs: new Map(), sessions: new Map() };
}

/** The held rows of a table across `segments`, key by key, each key's in order. */
function heldAcross<R extends HeldRow>(segments: readonly HeldSegment[], table: (segment: HeldSegment) => HeldRows<R>): R[] {
  if (segments.length === 1) return table(segments[0]).all();
  const combined = createHeldRows<R>();
  for (const segment of segments) for (const row of table(segment).all()) combined.hold(row);
  return combined.all();
}

/** A multi-row UPDATE of `table` over one array per column, rows grouped by the columns they set. */
function groupedUpdates(
  table: 'runs' | 'sessions',
  rows: ReadonlyMap<string, ReadonlyMap<string, unknown>>,
  add: (sql: string, arrays: unknown[]) => void,
): void {
  const groups = new Map<string, { columns: string[]; ids: string[]; values: unknown[][] }>();
  for (const [id, fields] of rows) {
    if (fields.size === 0) continue;
    const columns = [...fields.keys()].sort();
    const shape = columns.join(',');
    let group = groups.get(shape);
    if (!group) {
      group = { columns, ids: [], values: columns.map(() => []) };
      groups.set(shape, group);
    }
    group.ids.push(id);
    columns.forEach((column, index) => group.values[index].push(fields.get(column) ?? null));
  }
  for (const { columns, ids, values } of groups.values()) {
    const arrays = columns
      .map((column, index) => `$${index + 2}::${column.startsWith('+') ? 'bigint' : integerColumns.has(column) ? 'int' : 'text'}[]`)
      .join(', ');
    const names = columns.map((column) => (column.startsWith('+') ? column.slice(1) : column));
    // A column named `+x` adds to the stored value (token counts); the others replace it.
    const sets = names
      .map((column, index) => (columns[index].startsWith('+') ? `${column} = ${table}.${column} + held.${column}` : `${column} = held.${column}`))
      .join(', ');
    add(`UPDATE ${table} SET ${sets} FROM unnest($1::text[], ${arrays}) AS held(id, ${names.join(', ')}) WHERE ${table}.id = held.id`, [ids, ...values]);
  }
}

const insertEvents =
  'INSERT INTO run_event_rows (run_id, seq, at, type, data, last_seq) SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::int[])';
const insertMessages =
  'INSERT INTO messages (session_id, seq, role, content, created_at) SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[])';
const updateContents =
  'UPDATE messages SET content = held.content FROM unnest($1::text[], $2::int[], $3::text[]) AS held(session_id, seq, content) WHERE messages.session_id = held.session_id AND messages.seq = held.seq';

/**
 * The most characters the events of one `run_event_rows` row take, about: a row longer than about
 * 2 KB is compressed into TOAST, which costs the server more than the rows it saves.
 */
export const maxEventRowChars = 1800;

/**
 * The `run_event_rows` rows of held events (key by key, as `HeldRows.all` gives them), one array
 * per column (`run_id, seq, at, type, data, last_seq`), packed as `packEvents` packs them for
 * both engines.
 */
export function packedEventArrays(events: readonly HeldEvent[]): unknown[][] {
  const arrays: [string[], number[], string[], string[], string[], Array<number | null>] = [[], [], [], [], [], []];
  for (const row of packEvents(events, maxEventRowChars)) {
    arrays[0].push(row.run_id);
    arrays[1].push(row.seq);
    arrays[2].push(row.at);
    arrays[3].push(row.type);
    arrays[4].push(row.data);
    arrays[5].push(row.last_seq);
  }
  return arrays;
}

/** Renumbers `$1`, `$2`, ... of `sql` from `offset + 1` on. */
function shift(sql: string, offset: number): string {
  return offset === 0 ? sql : sql.replace(/\$(\d+)/g, (_, index: string) => `$${Number(index) + offset}`);
}

function messageArrays(rows: readonly HeldMessage[]): unknown[][] {
  return [
    rows.map((row) => row.key),
    rows.map((row) => row.seq),
    rows.map((row) => row.role),
    rows.map((row) => row.content),
    rows.map((row) => row.created_at),
  ];
}

/**
 * The one statement that writes the held segments of a batch, in order: a data-modifying CTE per
 * kind of row (each a multi-row write over `unnest` of one array per column), runs grouped by the
 * columns they change. One statement writes a row once, so the segments are combined first: a
 * later segment's field of a run or session wins, token counts add up, and a later rewrite of a
 * message held in an earlier segment becomes that row's content. Null when nothing is held.
 */
export function segmentStatement(segments: readonly HeldSegment[]): { text: string; values: unknown[] } | null {
  const parts: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, arrays: unknown[]) => {
    parts.push(shift(sql, values.length));
    values.push(...arrays);
  };
  const events = heldAcross(segments, (segment) => segment.events);
  const messages = heldAcross(segments, (segment) => segment.messages);
  const contents = new Map<string, [string, number, string]>();
  const runs = new Map<string, Map<string, unknown>>();
  const sessions = new Map<string, HeldSession>();
  segments.forEach((segment, place) => {
    for (const [key, entry] of segment.contents) {
      if (place > 0) {
        // A message an earlier segment holds has no stored row to update yet: its held row takes the content.
        const row = segments
          .slice(0, place)
          .find((earlier) => earlier.messages.find(entry[0], entry[1]))
          ?.messages.find(entry[0], entry[1]);
        if (row) {
          row.content = entry[2];
          continue;
        }
      }
      contents.set(key, entry);
    }
    for (const [id, fields] of segment.runs) {
      const merged = runs.get(id);
      if (merged) for (const [column, value] of fields) merged.set(column, value);
      else runs.set(id, new Map(fields));
    }
    for (const [id, held] of segment.sessions) {
      const merged = sessions.get(id);
      if (!merged) sessions.set(id, { ...held, fields: new Map(held.fields) });
      else {
        for (const [column, value] of held.fields) merged.fields.set(column, value);
        merged.input_tokens += held.input_tokens;
        merged.output_tokens += held.output_tokens;
        merged.cache_read_tokens += held.cache_read_tokens;
        merged.cache_write_tokens += held.cache_write_tokens;
      }
    }
  });
  if (events.length > 0) add(insertEvents, packedEventArrays(events));
  if (messages.length > 0) add(insertMessages, messageArrays(messages));
  if (contents.size > 0) {
    const entries = [...contents.values()];
    add(updateContents, [entries.map((entry) => entry[0]), entries.map((entry) => entry[1]), entries.map((entry) => entry[2])]);
  }
  groupedUpdates('runs', runs, add);
  if (sessions.size > 0) {
    const fieldsOf = new Map<string, Map<string, unknown>>();
    for (const [id, held] of sessions) {
      const fields = new Map(held.fields);
      if (held.input_tokens !== 0 || held.output_tokens !== 0) {
        fields.set('+input_tokens', held.input_tokens);
        fields.set('+output_tokens', held.output_tokens);
      }
      if (held.cache_read_tokens !== 0 || held.cache_write_tokens !== 0) {
        fields.set('+cache_read_tokens', held.cache_read_tokens);
        fields.set('+cache_write_tokens', held.cache_write_tokens);
      }
      fieldsOf.set(id, fields);
    }
    groupedUpdates('sessions', fieldsOf, add);
  }
  if (parts.length === 0) return null;
  if (parts.length === 1) return { text: parts[0], values };
  return {
    text: `WITH ${parts
      .slice(1)
      .map((part, index) => `w${index} AS (${part})`)
      .join(', ')} ${parts[0]}`,
    values,
  };
}

/**
 * Moves held rows past the seqs another process took: for each key whose first held row is at or
 * below the stored maximum, every held row of that key (in order, across `segments`) moves up by
 * the same amount (see `moveHeldPast`). Returns the last seq held per moved key.
 */
export function renumberHeld(segments: readonly HeldSegment[], table: 'events' | 'messages', stored: ReadonlyMap<string, number>): Map<string, number> {
  const byKey = createHeldRows<HeldRow>();
  for (const segment of segments) for (const row of segment[table].all()) byKey.hold(row);
  const moved = new Map<string, number>();
  for (const key of byKey.keys()) {
    const rows = byKey.of(key)!;
    const last = stored.get(key) ?? 0;
    if (rows[0].seq <= last) moved.set(key, moveHeldPast(rows, last));
  }
  return moved;
}

/** The keys of a table's held rows in `segments`. */
export function heldKeys(segments: readonly HeldSegment[], table: 'events' | 'messages'): string[] {
  const keys = new Set<string>();
  for (const segment of segments) for (const key of segment[table].keys()) keys.add(key);
  return [...keys];
}

const quoted = /[\\"]/;

/**
 * A one-dimensional array as a Postgres array literal: strings quoted (backslash and double quote
 * escaped), null as NULL. The same text `pg` would send, made with one pass over each string
 * instead of two (the held rows of a batch are hundreds of JSON strings).
 */
export function pgArrayLiteral(values: readonly unknown[]): string {
  let literal = '{';
  for (let index = 0; index < values.length; index++) {
    if (index > 0) literal += ',';
    const value = values[index];
    if (value === null || value === undefined) literal += 'NULL';
    else if (typeof value === 'number' || typeof value === 'bigint') literal += String(value);
    else if (typeof value === 'boolean') literal += value ? 't' : 'f';
    else {
      const text = String(value);
      literal += quoted.test(text) ? `"${text.replace(/[\\"]/g, '\\$&')}"` : `"${text}"`;
    }
  }
  return `${literal}}`;
}

/**
 * Named statements by text, so the server parses and plans each shape once per connection.
 * Arrays among the values are sent in binary when the statement casts them (`$1::text[]`, see
 * {@link pgBinaryArray}), else as array literals (see {@link pgArrayLiteral}).
 */
export function createStatementNames(limit = 500): (query: { text: string; values: unknown[] }) => QueryConfig {
  const names = new Map<string, { name: string; types: Map<number, ArrayElementType> }>();
  return (query) => {
    let named = names.get(query.text);
    if (named === undefined && names.size < limit) {
      named = { name: `cadre_${names.size}`, types: arrayParameterTypes(query.text) };
      names.set(query.text, named);
    }
    const types = named?.types ?? arrayParameterTypes(query.text);
    const values = query.values.some((value) => Array.isArray(value) && value.every((item) => !Array.isArray(item)))
      ? query.values.map((value, index) => {
          if (!Array.isArray(value)) return value;
          const type = types.get(index);
          return (type && pgBinaryArray(value, type)) ?? pgArrayLiteral(value);
        })
      : query.values;
    return named === undefined ? { text: query.text, values } : { text: query.text, values, name: named.name };
  };
}

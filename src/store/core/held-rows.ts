import { packedEvent, packedEventsType } from './event-rows.ts';

/**
 * A row appended by a write acknowledged before its commit, kept until the commit writes it: its
 * key (the session of a message, the run of an event) and its seq, which a collision with another
 * process's rows may move (and `record`, the object handed back to the caller, follows it).
 */
export interface HeldRow {
  key: string;
  seq: number;
  record?: { seq?: number };
}

/** A held event: `data` is its JSON, encoded once when it was held. */
export interface HeldEvent extends HeldRow {
  at: string;
  type: string;
  data: string;
}

/** A held message: `content` is its JSON, rewritten in place while the message is held. */
export interface HeldMessage extends HeldRow {
  role: string;
  content: string;
  created_at: string;
}

/** Held rows by key, each key's in seq order. */
export interface HeldRows<R extends HeldRow> {
  readonly size: number;
  hold(row: R): void;
  /** The rows of `key`, in order. */
  of(key: string): readonly R[] | undefined;
  /** The held row of `key` with `seq`. */
  find(key: string, seq: number): R | undefined;
  /** The rows of `key` after `afterSeq`, in order. */
  after(key: string, afterSeq: number): R[];
  /** Every row, key by key, each key's in order. */
  all(): R[];
  keys(): IterableIterator<string>;
  clear(): void;
}

/**
 * The rows a store holds for its next commit (messages or events), by key. Both engines keep
 * their appends here; each writes them with its own multi-row statement.
 */
export function createHeldRows<R extends HeldRow>(): HeldRows<R> {
  const byKey = new Map<string, R[]>();
  return {
    get size() {
      return byKey.size;
    },
    hold(row) {
      const rows = byKey.get(row.key);
      if (rows) rows.push(row);
      else byKey.set(row.key, [row]);
    },
    of: (key) => byKey.get(key),
    find: (key, seq) => byKey.get(key)?.find((row) => row.seq === seq),
    after(key, afterSeq) {
      const rows = byKey.get(key);
      if (rows === undefined) return [];
      const found: R[] = [];
      for (const row of rows) if (row.seq > afterSeq) found.push(row);
      return found;
    },
    all() {
      const rows: R[] = [];
      for (const list of byKey.values()) for (const row of list) rows.push(row);
      return rows;
    },
    keys: () => byKey.keys(),
    clear: () => byKey.clear(),
  };
}

/**
 * Moves the held rows of one key (in order) past `storedLast`, the last seq another process stored
 * meanwhile, all by the same amount; rows already past it stay. Returns the last seq they hold.
 */
export function moveHeldPast(rows: readonly HeldRow[], storedLast: number): number {
  const by = storedLast + 1 - rows[0].seq;
  if (by > 0) {
    for (const row of rows) {
      row.seq += by;
      if (row.record) row.record.seq = row.seq;
    }
  }
  return rows[rows.length - 1].seq;
}

/** An event row as both engines store it: one event (`last_seq` null), or several of a run's packed. */
export interface PackedEventRow {
  run_id: string;
  seq: number;
  at: string;
  type: string;
  data: string;
  last_seq: number | null;
  /** The place of its first event among the held events given. */
  from: number;
}

/**
 * The rows of held events (key by key, each key's in seq order, as `HeldRows.all` gives them): a
 * run's consecutive events share a row of at most about `maxChars` characters, whose `seq` is the
 * first one's, `last_seq` the last one's, `type` {@link packedEventsType}, `at` the first one's
 * time and `data` the JSON array of their [at, type, data] (see `addRunEvents`); an event alone
 * in its row is stored as itself, `last_seq` null. A gap in the seqs starts a new row.
 */
export function packEvents(events: readonly HeldEvent[], maxChars: number): PackedEventRow[] {
  const rows: PackedEventRow[] = [];
  const push = (from: number, to: number) => {
    const first = events[from];
    if (to - from === 1) {
      rows.push({ run_id: first.key, seq: first.seq, at: first.at, type: first.type, data: first.data, last_seq: null, from });
      return;
    }
    let data = '[';
    for (let index = from; index < to; index++) {
      const event = events[index];
      data += `${index === from ? '' : ','}${packedEvent(event.at, event.type, event.data)}`;
    }
    rows.push({ run_id: first.key, seq: first.seq, at: first.at, type: packedEventsType, data: `${data}]`, last_seq: events[to - 1].seq, from });
  };
  let from = 0;
  let size = 0;
  for (let index = 0; index < events.length; index++) {
    const event = events[index];
    const eventSize = event.at.length + event.type.length + event.data.length + 8;
    if (index > from) {
      const previous = events[index - 1];
      if (size + eventSize > maxChars || event.key !== previous.key || event.seq !== previous.seq + 1) {
        push(from, index);
        from = index;
        size = 0;
      }
    }
    size += eventSize;
  }
  if (events.length > 0) push(from, events.length);
  return rows;
}

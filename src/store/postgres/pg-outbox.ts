import type pg from 'pg';

/**
 * One item's share of a statement that several items of a batch send together: twenty runs
 * starting in one event-loop turn cost the server one multi-row statement, not twenty (each
 * statement costs the server a bind, an execution and a reply, and this process a query object,
 * its encoding and a result to parse).
 */
export interface PgMergeable<I, T> {
  /** Items with equal keys may share one statement; `build` and `split` are the same for them. */
  key: string;
  /** A row the statement writes: writes of one row never share a statement (one statement changes a row once). */
  row?: string;
  input: I;
  /** The one statement for the inputs, in order (arrays as parameters, so its text depends on the key only). */
  build: (inputs: readonly I[]) => { text: string; values: unknown[]; rowMode?: 'array' };
  /** Each input's value from the statement's rows, in order; an `Error` rejects that item alone. */
  split: (rows: readonly never[], inputs: readonly I[]) => Array<T | Error>;
}

/** Sends `op` as part of a shared statement; resolves with its value once the statement is answered. */
export type PgMerge = <I, T>(op: PgMergeable<I, T>) => Promise<T>;

/** How statements of the items being started share: see {@link PgOutbox.mode}. */
export type PgMergeMode = 'consecutive' | 'grouped';

/** Collects the mergeable statements of a batch's items and sends each group as one statement. */
export interface PgOutbox {
  /** For the items started next: `merge` and a client whose direct statements keep their place. */
  readonly merge: PgMerge;
  readonly client: pg.ClientBase;
  /**
   * `consecutive` (writes): only statements requested one right after the other share, so writes
   * keep their order. `grouped` (reads, and the locking reads of compare-and-sets): statements with
   * equal keys share wherever they were requested, sent at the next `flush`.
   */
  mode: PgMergeMode;
  /** Sends everything collected so far. */
  flush(): void;
}

interface Entry {
  op: PgMergeable<unknown, unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The outbox of one batch on `client`. A statement requested and never flushed explicitly is
 * sent at the end of the microtask queue, so an item that requests one late is not left waiting.
 *
 * @example
 * const outbox = createPgOutbox(client, name);
 * const found = work(outbox.client, undefined, outbox.merge);
 * outbox.flush();
 */
export function createPgOutbox(client: pg.ClientBase, name: (query: { text: string; values: unknown[] }) => pg.QueryConfig): PgOutbox {
  // Writes requested one after the other with one key; reads (and locks) by key.
  let run: Entry[] = [];
  let groups = new Map<string, Entry[]>();
  let later = false;

  function send(entries: Entry[]): void {
    const inputs = entries.map((entry) => entry.op.input);
    let statement: ReturnType<PgMergeable<unknown, unknown>['build']>;
    try {
      statement = entries[0].op.build(inputs);
    } catch (error) {
      for (const entry of entries) entry.reject(error);
      return;
    }
    const query = {
      ...name({ text: statement.text, values: statement.values }),
      ...(statement.rowMode ? { rowMode: statement.rowMode } : {}),
    } as pg.QueryConfig;
    client.query(query).then(
      ({ rows }) => {
        let values: unknown[];
        try {
          values = entries[0].op.split(rows as never[], inputs);
        } catch (error) {
          for (const entry of entries) entry.reject(error);
          return;
        }
        entries.forEach((entry, index) => (values[index] instanceof Error ? entry.reject(values[index]) : entry.resolve(values[index])));
      },
      (error: unknown) => {
        for (const entry of entries) entry.reject(error);
      },
    );
  }

  function flushRun(): void {
    if (run.length === 0) return;
    const entries = run;
    run = [];
    send(entries);
  }

  function flush(): void {
    flushRun();
    const all = groups;
    groups = new Map();
    for (const entries of all.values()) send(entries);
  }

  function sendLater(): void {
    if (later) return;
    later = true;
    queueMicrotask(() => {
      later = false;
      flush();
    });
  }

  const outbox: PgOutbox = {
    mode: 'consecutive',
    merge<I, T>(op: PgMergeable<I, T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const entry = { op, resolve, reject } as Entry;
        if (outbox.mode === 'grouped') {
          const group = groups.get(op.key);
          if (group) group.push(entry);
          else groups.set(op.key, [entry]);
        } else {
          if (run.length > 0 && (run[0].op.key !== op.key || (op.row !== undefined && run.some((other) => other.op.row === op.row)))) flushRun();
          run.push(entry);
        }
        sendLater();
      });
    },
    client: {
      // A statement sent directly goes after the writes requested before it.
      query: ((...args: Parameters<pg.ClientBase['query']>) => {
        flushRun();
        return (client.query as (...all: unknown[]) => unknown)(...args);
      }) as pg.ClientBase['query'],
    } as pg.ClientBase,
    flush,
  };
  return outbox;
}

/**
 * A `merge` that sends each statement on its own at once (a batch retried item by item under
 * savepoints, where one item's failure must not touch another's).
 */
export function directMerge(client: pg.ClientBase, name: (query: { text: string; values: unknown[] }) => pg.QueryConfig): PgMerge {
  return <I, T>(op: PgMergeable<I, T>): Promise<T> => {
    const outbox = createPgOutbox(client, name);
    const result = outbox.merge(op);
    outbox.flush();
    return result;
  };
}

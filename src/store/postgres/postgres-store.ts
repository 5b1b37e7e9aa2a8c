import pg from 'pg';
import { isFinished, type NewRunEvent, type RunEventRecord, type RunRecord } from '../records.ts';
import { redactConnectionString } from '../redact-connection-string.ts';
import type { Store } from '../store.ts';
import { addRunEvents, copyRun, patchColumns, patchableSessionColumns, runColumnList, runFromRow, runToSql, sessionFromRow, type EventRow } from '../sqlite/rows.ts';
import { setBounded } from '../../util/bounded-map.ts';
import { createPgApprovals } from './pg-approvals.ts';
import { createPgBatches, isConnectionError, type PgWork, type PgWorkOptions } from './pg-batches.ts';
import type { PgMerge } from './pg-outbox.ts';
import { createStatementNames, type HeldSegment, type HeldSession } from './pg-held-writes.ts';
import { createKeyOrder } from './pg-key-order.ts';
import { migratePostgres } from './pg-migrations.ts';
import { pgRunQuery } from './pg-run-query.ts';
import { createPgMessages } from './pg-messages.ts';
import { appendWithSeq, changeRunOp, encodeEvents, groupBy, insertRunOp, lockRunsOp, runFields, type RunField } from './pg-run-writes.ts';
import { runOp, sessionOp, sessionRowOp } from './pg-lookups.ts';
import type { PgMergeable } from './pg-outbox.ts';
import { insertSessionOp } from './pg-session-writes.ts';
import { createKnownRuns, expectedRow } from './pg-known-runs.ts';
import { reportToDefaultLogger } from '../../logging/default-logger.ts';

/** A run's `run_event_rows` from the one holding the event after `$2` on (the rows before it hold none after it). */
const runEventRowsSql =
  'SELECT seq, at, type, data, last_seq FROM run_event_rows WHERE run_id = $1 AND seq >= COALESCE((SELECT seq FROM run_event_rows WHERE run_id = $1 AND seq <= $2 + 1 ORDER BY seq DESC LIMIT 1), 0) ORDER BY seq';

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:5432/database`; a `schema` search parameter picks the schema. */
  connectionString: string;
  /** The schema cadre's tables live in (created if missing). @default the `schema` parameter of the URL, else `public` */
  schema?: string;
  /** Connections to the server at most (one of them writes at a time). @default 8 */
  poolSize?: number;
  /** How long writes keep trying while the server cannot be reached (a restart). @default 30000 */
  reconnectMs?: number;
  /**
   * Whether a write waits for its commit to reach the disk (`synchronous_commit`). Off, as the
   * SQLite store's asynchronous commit: a crash of the server (not a clean restart) may lose the
   * last fraction of a second of writes, and each step waits far less. @default false
   */
  synchronousCommit?: boolean;
  /** Where errors of idle connections go (a server restart). @default the default logger (stderr) */
  onError?: (error: unknown) => void;
}

const activeStatuses = ['queued', 'running'];

/** Runs and sessions whose last seq is kept in memory, each. */
const seqCacheSize = 20_000;

/** The connection string without cadre's own `schema` parameter, and that schema. */
export function splitSchema(connectionString: string): { url: string; schema: string | null } {
  const url = new URL(connectionString);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  return { url: url.toString(), schema };
}

/**
 * The Postgres store: the same records, queries and guarantees as the SQLite store, for many
 * processes on many machines, with group commit as the SQLite store does it (see
 * `createPgBatches`). Appends and changes that need nothing read back (events and messages of
 * runs and sessions whose last seq this process knows, fields of runs it knows exist) are
 * acknowledged at once and written with the next commit, many rows per statement; writes that
 * must read (transitions, claims, answers, notification deliveries, a seq nobody here knows)
 * resolve after their commit and lock what they check (`FOR UPDATE`), so of racing processes
 * exactly one wins. Reads wait for this process's earlier writes, so they see them; nothing is
 * read from memory. Writes and reads of one kind in a batch share one statement (see
 * `PgMergeable`). A compare-and-set whose patch depends on the run (a run's end) is sent at once,
 * guarded by the whole row being as this process last left it, and reads the run first only when
 * that guard fails (see `createKnownRuns`). Statements are named (prepared once per connection).
 * The schema is migrated on open (`cadre_schema_migrations`).
 *
 * @example
 * const store = await openPostgresStore({ connectionString: 'postgres://cadre@127.0.0.1/cadre' });
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const { url, schema: fromUrl } = splitSchema(options.connectionString);
  const schema = options.schema ?? fromUrl ?? 'public';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(schema)) throw new TypeError(`The schema name '${schema}' must be letters, digits and '_'.`);
  const label = redactConnectionString(options.connectionString);
  const report = options.onError ?? reportToDefaultLogger;
  const reconnectMs = options.reconnectMs ?? 30_000;
  const sessionOptions = `-c search_path=${schema}${options.synchronousCommit ? '' : ' -c synchronous_commit=off'}`;
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 8, options: sessionOptions, connectionTimeoutMillis: 10_000 });
  // An idle connection the server dropped (a restart) must not crash the process; the pool makes a new one.
  pool.on('error', (error) => report(error));
  try {
    const client = await pool.connect();
    try {
      if (schema !== 'public') await createSchema(client, schema);
      await migratePostgres(client, label);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  const name = createStatementNames();
  // The last seq per run (events) and per session (messages), known from this process's own
  // writes. A run whose last seq is known exists. Another process appending to the same run
  // makes a held row collide at its commit, which moves it past (see `createPgBatches`).
  const eventSeqs = new Map<string, number>();
  const messageSeqs = new Map<string, number>();
  const learn = (seqs: Map<string, number>, key: string, seq: number) => setBounded(seqs, key, Math.max(seqs.get(key) ?? 0, seq), seqCacheSize);
  const batches = createPgBatches({
    label,
    reconnectMs,
    name,
    async connect() {
      const client = new pg.Client({ connectionString: url, options: sessionOptions, connectionTimeoutMillis: 10_000, pipeline: true });
      try {
        await client.connect();
      } catch (error) {
        client.end().catch(() => {});
        throw error;
      }
      return client;
    },
    async storedSeqs(client, table, keys) {
      // A run's last event is its last row's `last_seq` when that row holds several (see `packedEventArrays`).
      const text =
        table === 'events'
          ? 'SELECT DISTINCT ON (run_id) run_id AS key, COALESCE(last_seq, seq) AS seq FROM run_event_rows WHERE run_id = ANY($1) ORDER BY run_id, seq DESC'
          : 'SELECT session_id AS key, MAX(seq) AS seq FROM messages WHERE session_id = ANY($1) GROUP BY session_id';
      const { rows } = await client.query<{ key: string; seq: number }>(text, [keys]);
      return new Map(rows.map((row) => [row.key, row.seq]));
    },
    onRenumbered(table, last) {
      for (const [key, seq] of last) learn(table === 'events' ? eventSeqs : messageSeqs, key, seq);
    },
  });
  const order = createKeyOrder();
  // Runs as this process's writes left them: a run's end is then one guarded write, no read first.
  const known = createKnownRuns();
  let closed = false;

  function refusal(): Error | null {
    if (closed) return new Error(`The store ${label} is closed.`);
    return batches.failure;
  }

  /** Queues a write that reads; resolves after its commit. */
  function write<T, R = undefined>(work: PgWork<T, R>, workOptions?: PgWorkOptions<R>): Promise<T> {
    const refused = refusal();
    return refused ? Promise.reject(refused) : batches.write(work, workOptions);
  }

  /** A write of runs and sessions `keys` (see `createKeyOrder`), refused once the store is closed or failed. */
  function ordered<T>(keys: readonly string[], decide: () => T | Promise<T>): Promise<T> {
    const refused = refusal();
    if (refused) return Promise.reject(refused);
    return order.run(keys, () => {
      const late = refusal();
      if (late) throw late;
      return decide();
    });
  }

  /** Holds events of runs whose last seq is known, each taking the next one. */
  function holdEvents(segment: HeldSegment, events: readonly NewRunEvent[], data: readonly string[]): void {
    events.forEach((event, index) => {
      const seq = eventSeqs.get(event.run_id)! + 1;
      setBounded(eventSeqs, event.run_id, seq, seqCacheSize);
      event.seq = seq;
      segment.events.push({ key: event.run_id, seq, columns: [event.at, event.type, data[index]], record: event });
    });
  }

  /** Writes events of runs whose last seq is not known here, in SQL; resolves after the commit. */
  function insertEvents(client: pg.ClientBase, events: readonly NewRunEvent[], data: readonly string[]): Promise<void> {
    const writes = [...groupBy(events, (event) => event.run_id)].map(([runId, indexes]) =>
      appendWithSeq(client, name, 'run_event_rows', runId, indexes.map((index) => [events[index].at, events[index].type, data[index]] as const)).then((seqs) => {
        indexes.forEach((index, place) => (events[index].seq = seqs[place]));
      }),
    );
    return Promise.all(writes).then(() => undefined);
  }

  /** After a commit: the seqs of events written in SQL are known now. */
  function learnEvents(events: readonly NewRunEvent[]): void {
    for (const event of events) if (event.seq !== undefined) learn(eventSeqs, event.run_id, event.seq);
  }

  /**
   * A read after this process's earlier writes. A lookup by key goes on the writer's connection,
   * behind the writes queued before it and with them (reads of one event-loop turn share one
   * round trip). A listing, which may be long, goes on the pool when no write is pending, so it
   * never holds up a commit. Retried while the server restarts (up to `reconnectMs`).
   */
  async function read<R extends pg.QueryResultRow = Record<string, unknown>>(text: string, values: unknown[] = [], { array = false, listing = false } = {}): Promise<R[]> {
    if (closed) throw new Error(`The store ${label} is closed.`);
    await order.started();
    const query = (array ? { ...name({ text, values }), rowMode: 'array' } : name({ text, values })) as pg.QueryConfig;
    if (!listing || batches.busy()) return batches.read((client) => client.query<R>(query).then((result) => result.rows));
    // Idle connections the server dropped fail one by one; the pool then opens new ones.
    const deadline = Date.now() + reconnectMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return (await pool.query<R>(query)).rows;
      } catch (error) {
        if (!isConnectionError(error) || closed || Date.now() >= deadline) throw error;
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** Math.min(attempt, 5))));
      }
    }
  }

  /**
   * A lookup by key after this process's earlier writes, on the writer's connection behind them;
   * the lookups of one kind in a batch share one statement.
   */
  async function lookup<I, T>(op: PgMergeable<I, T>): Promise<T> {
    if (closed) throw new Error(`The store ${label} is closed.`);
    await order.started();
    return batches.read((_client, _read, merge) => merge(op));
  }

  /** The held changes of session `id` in the open segment. */
  function heldSession(id: string): HeldSession {
    const segment = batches.held();
    let held = segment.sessions.get(id);
    if (!held) segment.sessions.set(id, (held = { fields: new Map(), input_tokens: 0, output_tokens: 0 }));
    return held;
  }

  const store: Store = {
    description: `postgres:${label}`,

    ...createPgApprovals({ write, read }),

    createSession(session) {
      return ordered([`s:${session.id}`], () =>
        batches
          .write((_client, _read, merge) =>
            merge(insertSessionOp({ ...session })).then((inserted) => {
              if (!inserted) throw new Error(`A session with id '${session.id}' is already stored.`);
            }),
          )
          .then(() => {
            // A new session has no messages yet: its first one is held at once.
            learn(messageSeqs, session.id, 0);
          }),
      );
    },

    getSession(id) {
      return lookup(sessionOp(id));
    },

    async listSessions({ limit, primaryOnly = false } = {}) {
      const where = primaryOnly ? ' WHERE parent_run_id IS NULL' : '';
      const rows = await read(`SELECT * FROM sessions${where} ORDER BY created_at DESC, id DESC${limit === undefined ? '' : ' LIMIT $1'}`, limit === undefined ? [] : [Math.max(0, Math.floor(limit))], { listing: true });
      return rows.map(sessionFromRow);
    },

    updateSession(id, patch) {
      let columns: string[];
      try {
        columns = patchColumns(patch, patchableSessionColumns, 'A session patch');
      } catch (error) {
        return Promise.reject(error);
      }
      if (columns.length === 0) return write(async () => {});
      // Resolved after its commit, not held: a stop of the session is announced to other
      // processes (through any coordination) right after it, and they read it from the store.
      const sets = columns.map((column, index) => `${column} = $${index + 2}`).join(', ');
      const values = [id, ...columns.map((column) => (patch as Record<string, unknown>)[column] ?? null)];
      return write((client) => client.query(name({ text: `UPDATE sessions SET ${sets} WHERE id = $1`, values })).then(() => undefined));
    },

    addSessionUsage(id, usage) {
      const refused = refusal();
      if (refused) return Promise.reject(refused);
      const held = heldSession(id);
      held.input_tokens += usage.input_tokens;
      held.output_tokens += usage.output_tokens;
      return Promise.resolve();
    },

    async getSessionUsage(id) {
      const row = await lookup(sessionRowOp(id));
      return row ? { input_tokens: Number(row.input_tokens), output_tokens: Number(row.output_tokens) } : null;
    },

    ...createPgMessages({ batches, name, lookup, ordered, refusal, messageSeqs, learn, learnEvents, seqCacheSize }),

    insertRun(run, event) {
      let values: unknown[];
      let data: string[];
      try {
        values = runToSql(run) as unknown[];
        data = encodeEvents(run.id, [event]);
      } catch (error) {
        return Promise.reject(error);
      }
      return ordered([`r:${run.id}`], () =>
        batches
          .write((_client, _read, merge) =>
            merge(insertRunOp({ values, event, data: data[0] })).then((seq) => {
              if (seq === null) throw new Error(`A run with id '${run.id}' is already stored.`);
              event.seq = seq;
            }),
          )
          .then(() => {
            known.learnInserted(values);
            learnEvents([event]);
          }),
      );
    },

    transitionRun({ id, from, to, patch = {}, patchFor, event }) {
      const allowed = from.filter((status) => !isFinished(status));
      let fields: RunField[];
      let data: string[];
      try {
        fields = runFields(patch);
        data = encodeEvents(id, [event]);
      } catch (error) {
        return Promise.reject(error);
      }
      if (allowed.length === 0) return ordered([`r:${id}`], () => write(async () => null));
      const change = (current: RunRecord | undefined | null, merge: PgMerge, expected?: unknown[]): Promise<RunRecord | null> => {
        let more: RunField[] = [];
        if (patchFor) {
          if (!current || !allowed.includes(current.status)) return Promise.resolve(null);
          more = runFields(patchFor(copyRun(current)));
        }
        // Later fields win, as in an object spread: patchFor's over patch's.
        const merged = new Map([{ column: 'status', sql: to as unknown }, ...fields, ...more].map((field) => [field.column, field]));
        return merge(changeRunOp({ id, fields: [...merged.values()], allowed, expected, events: [event], data })).then(({ run, seqs }) => {
          if (run) event.seq = seqs[0];
          return run;
        });
      };
      const done = (run: RunRecord | null) => {
        learnEvents([event]);
        if (run) known.learn(run);
        return run;
      };
      // patchFor decides on the run as it stands: locked and read first, unless this process
      // knows it, when the write applies only to the row as known (else it reads first after all).
      const readFirst = (_client: pg.ClientBase, merge: PgMerge) => merge(lockRunsOp([id])).then((locked) => locked.get(id));
      const readingFirst = () => batches.write((_client, current: RunRecord | undefined, merge) => change(current, merge), { read: readFirst }).then(done);
      return ordered([`r:${id}`], () => {
        const assumed = patchFor ? known.get(id) : undefined;
        if (patchFor && !assumed) return readingFirst();
        const guarded = batches.write((_client, _read, merge) => change(assumed ?? null, merge, assumed && expectedRow(assumed)));
        if (!assumed) return guarded.then(done);
        return guarded.then((run) => (run ? done(run) : (known.forget(id), readingFirst())));
      });
    },

    updateRun(id, patch, events = []) {
      let fields: RunField[];
      let data: string[];
      try {
        fields = runFields(patch);
        data = encodeEvents(id, events);
      } catch (error) {
        return Promise.reject(error);
      }
      return ordered([`r:${id}`], () =>
        batches
          .write((_client, _read, merge) =>
            merge(changeRunOp({ id, fields, events, data })).then(({ run, seqs }) => {
              seqs.forEach((seq, index) => (events[index].seq = seq));
              return run;
            }),
          )
          .then((run) => {
            learnEvents(events);
            if (run) known.learn(run);
            return run;
          }),
      );
    },

    patchRun(id, patch, events = []) {
      let fields: RunField[];
      let data: string[];
      try {
        fields = runFields(patch);
        data = encodeEvents(id, events);
      } catch (error) {
        return Promise.reject(error);
      }
      return ordered([`r:${id}`], (): boolean | Promise<boolean> => {
        if (eventSeqs.has(id)) {
          // A run this process wrote to exists: its fields and events are held, never read back.
          if (events.length === 0 && fields.length === 0) return true;
          const segment = batches.held();
          holdEvents(segment, events, data);
          if (fields.length > 0) {
            let held = segment.runs.get(id);
            if (!held) segment.runs.set(id, (held = new Map()));
            for (const field of fields) held.set(field.column, field.sql);
            known.patch(id, patch);
          }
          return true;
        }
        return batches
          .write((_client, _read, merge) =>
            merge(changeRunOp({ id, fields, events, data })).then(({ run, seqs }) => {
              seqs.forEach((seq, index) => (events[index].seq = seq));
              if (run) known.learn(run);
              return run !== null;
            }),
          )
          .then((found) => {
            learnEvents(events);
            return found;
          });
      });
    },

    appendRunEvents(events) {
      if (events.length === 0) return refusal() ? Promise.reject(refusal()) : Promise.resolve();
      let data: string[];
      try {
        data = encodeEvents(null, events);
      } catch (error) {
        return Promise.reject(error);
      }
      const runIds = [...new Set(events.map((event) => event.run_id))];
      return ordered(
        runIds.map((id) => `r:${id}`),
        (): void | Promise<void> => {
          if (runIds.every((id) => eventSeqs.has(id))) return holdEvents(batches.held(), events, data);
          return batches.write((client) => insertEvents(client, events, data)).then(() => learnEvents(events));
        },
      );
    },

    getRun(id) {
      return lookup(runOp(id));
    },

    async listRuns(query) {
      const { sql, parameters } = pgRunQuery(query);
      const rows = await read<unknown[]>(sql, parameters, { array: true, listing: true });
      return rows.map((row) => runFromRow(row as unknown as unknown[]));
    },

    async listRunEvents(runId, { afterSeq = 0, limit } = {}) {
      const max = limit === undefined ? null : Math.max(0, Math.floor(limit));
      // Rows may hold several events each: the one holding the event after `afterSeq` comes first,
      // and `max + 1` rows hold at least `max` events after it.
      const rows = await read<unknown[]>(max === null ? runEventRowsSql : `${runEventRowsSql} LIMIT $3`, max === null ? [runId, afterSeq] : [runId, afterSeq, max + 1], { array: true, listing: true });
      const events: RunEventRecord[] = [];
      for (const row of rows) addRunEvents(events, runId, row as unknown as EventRow, afterSeq);
      if (max !== null && events.length > max) events.length = max;
      return events;
    },

    renewLeases(owner, expiresAt) {
      const text = 'UPDATE runs SET lease_expires_at = $1 WHERE lease_owner = $2 AND status = ANY($3)';
      return write((client) => client.query(name({ text, values: [expiresAt, owner, activeStatuses] })).then(({ rowCount }) => rowCount ?? 0)).then((count) => {
        known.renewed(owner, expiresAt);
        return count;
      });
    },

    claimRun(id, owner, expiresAt, expiredBefore) {
      const text = `UPDATE runs SET lease_owner = $2, lease_expires_at = $3 WHERE id = $1 AND status = ANY($4) AND (lease_expires_at IS NULL OR lease_expires_at < $5) RETURNING ${runColumnList}`;
      return ordered([`r:${id}`], () =>
        batches
          .write((client) => client.query({ ...name({ text, values: [id, owner, expiresAt, activeStatuses, expiredBefore] }), rowMode: 'array' }).then(({ rows }) => (rows[0] ? runFromRow(rows[0] as unknown[]) : null)))
          .then((run) => {
            // The previous owner was another process that may have appended events.
            if (run) {
              eventSeqs.delete(id);
              known.learn(run);
            }
            return run;
          }),
      );
    },

    async flush() {
      if (closed) return;
      await order.started();
      await batches.settled();
    },

    onFailure(listener) {
      return batches.onFailure(listener);
    },

    async close() {
      if (closed) return;
      await order.started().catch(() => {});
      await batches.close();
      closed = true;
      await pool.end();
    },
  };
  return store;
}

/**
 * Creates the schema unless it exists. Processes opening a new schema at once (workers started
 * together) race inside `CREATE SCHEMA IF NOT EXISTS` itself: the losers get a unique violation
 * on the schema's name, and find it made.
 */
async function createSchema(client: { query(sql: string): Promise<unknown> }, schema: string): Promise<void> {
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== '23505' && code !== '42P06') throw error;
  }
}

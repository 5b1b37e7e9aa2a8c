import pg from 'pg';
import { redactConnectionString } from '../redact-connection-string.ts';
import type { Store } from '../store.ts';
import { createKnownRuns } from '../core/known-runs.ts';
import type { NewRunEvent } from '../records.ts';
import { patchColumns, patchableSessionColumns, sessionFromRow, usageOfRow } from '../core/record-rows.ts';
import { whenValid } from '../core/run-fields.ts';
import { createSeqCounters } from '../core/seq-counters.ts';
import { createPgApprovals } from './pg-approvals.ts';
import { createPgWorkflows } from './pg-workflows.ts';
import { createPgBatches, isConnectionError, type PgWork, type PgWorkOptions } from './pg-batches.ts';
import { createStatementNames, type HeldSession } from './pg-held-writes.ts';
import { createKeyOrder } from './pg-key-order.ts';
import { migratePostgres } from './pg-migrations.ts';
import { createPgMessages } from './pg-messages.ts';
import { createPgRuns } from './pg-runs.ts';
import { sessionOp, sessionRowOp } from './pg-lookups.ts';
import { createAnswerIndex } from '../core/result-refs.ts';
import type { PgMergeable } from './pg-outbox.ts';
import { insertSessionOp } from './pg-session-writes.ts';
import type { PgStoreContext } from './pg-store-context.ts';
import { reportToDefaultLogger } from '../../logging/default-logger.ts';
import { systemNowMs, type NowMs } from '../../util/clock.ts';

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
  /** The clock in epoch milliseconds that deadline is read on. @default systemNowMs */
  nowMs?: NowMs;
  /**
   * Whether a write waits for its commit to reach the disk (`synchronous_commit`). Off, as the
   * SQLite store's asynchronous commit: a crash of the server (not a clean restart) may lose the
   * last fraction of a second of writes, and each step waits far less. @default false
   */
  synchronousCommit?: boolean;
  /** Where errors of idle connections go (a server restart). @default the default logger (stderr) */
  onError?: (error: unknown) => void;
}

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
  const nowMs = options.nowMs ?? systemNowMs;
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
  const eventSeqs = createSeqCounters();
  const messageSeqs = createSeqCounters();
  const batches = createPgBatches({
    label,
    reconnectMs,
    nowMs,
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
      for (const [key, seq] of last) (table === 'events' ? eventSeqs : messageSeqs).learn(key, seq);
    },
  });
  const order = createKeyOrder();
  // Runs as this process's writes left them: a run's end is then one guarded write, no read first.
  const known = createKnownRuns({ limit: 5_000 });
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

  /** After a commit: the seqs of events written in SQL are known now. */
  function learnEvents(events: readonly NewRunEvent[]): void {
    for (const event of events) if (event.seq !== undefined) eventSeqs.learn(event.run_id, event.seq);
  }

  /**
   * A read after this process's earlier writes. A lookup by key goes on the writer's connection,
   * behind the writes queued before it and with them (reads of one event-loop turn share one
   * round trip). A listing, which may be long, goes on the pool when no write is pending, so it
   * never holds up a commit. Retried while the server restarts (up to `reconnectMs`).
   */
  async function read<R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values: unknown[] = [],
    { array = false, listing = false } = {},
  ): Promise<R[]> {
    if (closed) throw new Error(`The store ${label} is closed.`);
    await order.started();
    const query = (array ? { ...name({ text, values }), rowMode: 'array' } : name({ text, values })) as pg.QueryConfig;
    if (!listing || batches.busy()) return batches.read((client) => client.query<R>(query).then((result) => result.rows));
    // Idle connections the server dropped fail one by one; the pool then opens new ones.
    const deadline = nowMs() + reconnectMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return (await pool.query<R>(query)).rows;
      } catch (error) {
        if (!isConnectionError(error) || closed || nowMs() >= deadline) throw error;
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
    if (!held) segment.sessions.set(id, (held = { fields: new Map(), input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 }));
    return held;
  }

  // A finished run's answer is stored once, in its result: messages that repeat it refer to it.
  const answers = createAnswerIndex();
  const context: PgStoreContext = { batches, name, write, read, lookup, ordered, refusal, eventSeqs, messageSeqs, known, learnEvents, answers };
  const store: Store = {
    description: `postgres:${label}`,

    ...createPgApprovals({ write, read }),
    ...createPgWorkflows({ write, read }),

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
            messageSeqs.learn(session.id, 0);
          }),
      );
    },

    getSession(id) {
      return lookup(sessionOp(id));
    },

    async listSessions({ limit, primaryOnly = false } = {}) {
      const where = primaryOnly ? ' WHERE parent_run_id IS NULL' : '';
      const rows = await read(
        `SELECT * FROM sessions${where} ORDER BY created_at DESC, id DESC${limit === undefined ? '' : ' LIMIT $1'}`,
        limit === undefined ? [] : [Math.max(0, Math.floor(limit))],
        { listing: true },
      );
      return rows.map(sessionFromRow);
    },

    updateSession(id, patch) {
      return whenValid(
        () => patchColumns(patch, patchableSessionColumns, 'A session patch'),
        (columns) => {
          if (columns.length === 0) return write(async () => {});
          // Resolved after its commit, not held: a stop of the session is announced to other
          // processes (through any coordination) right after it, and they read it from the store.
          const sets = columns.map((column, index) => `${column} = $${index + 2}`).join(', ');
          const values = [id, ...columns.map((column) => (patch as Record<string, unknown>)[column] ?? null)];
          return write((client) => client.query(name({ text: `UPDATE sessions SET ${sets} WHERE id = $1`, values })).then(() => undefined));
        },
      );
    },

    addSessionUsage(id, usage) {
      const refused = refusal();
      if (refused) return Promise.reject(refused);
      const held = heldSession(id);
      held.input_tokens += usage.input_tokens;
      held.output_tokens += usage.output_tokens;
      held.cache_read_tokens += usage.cache_read_tokens ?? 0;
      held.cache_write_tokens += usage.cache_write_tokens ?? 0;
      return Promise.resolve();
    },

    async getSessionUsage(id) {
      const row = await lookup(sessionRowOp(id));
      return row ? usageOfRow(row as Parameters<typeof usageOfRow>[0]) : null;
    },

    ...createPgMessages(context),

    ...createPgRuns(context),

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

import pg from 'pg';
import type { PoolClient } from 'pg';
import { isFinished, type ApprovalRecord, type MessageRecord, type NewRunEvent, type RunEventRecord, type RunRecord, type SessionRuleRecord } from '../records.ts';
import { redactConnectionString } from '../redact-connection-string.ts';
import type { RunPatch, Store } from '../store.ts';
import { copyRun, messageFromRow, patchColumns, patchableRunColumns, patchableSessionColumns, runColumnList, runColumns, runEventFromRow, runFromRow, runSqlColumn, runToSql, runValueToSql, sessionFromRow } from '../sqlite/rows.ts';
import { createPgBatches, isConnectionError } from './pg-batches.ts';
import { migratePostgres } from './pg-migrations.ts';
import { pgRunQuery } from './pg-run-query.ts';
import { reportToDefaultLogger } from '../../logging/default-logger.ts';

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
const approvalColumns = 'id, session_id, run_id, agent, tool, argument, risk, summary, status, created_at, resolved_at, resolved_by, always, owner';
const insertRunSql = `INSERT INTO runs (${runColumns.join(', ')}) VALUES (${runColumns.map((_, index) => `$${index + 1}`).join(', ')})`;

/**
 * Appends rows with the next seq of their key (a run's events, a session's messages), in order,
 * in one statement per key: seq = the stored maximum + the row's place. Another process taking
 * the same seq meanwhile makes the write fail with a unique violation, which the batch retries.
 */
async function appendWithSeq(client: PoolClient, table: 'run_events' | 'messages', key: string, rows: ReadonlyArray<readonly [string, string, string]>): Promise<number[]> {
  const [keyColumn, columns] = table === 'run_events' ? ['run_id', ['at', 'type', 'data']] : ['session_id', ['role', 'content', 'created_at']];
  const { rows: inserted } = await client.query<{ seq: number }>(
    `INSERT INTO ${table} (${keyColumn}, seq, ${columns.join(', ')})
     SELECT $1, last.seq + added.ord, added.${columns[0]}, added.${columns[1]}, added.${columns[2]}
     FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM ${table} WHERE ${keyColumn} = $1) last,
          unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS added(${columns.join(', ')}, ord)
     RETURNING seq`,
    [key, rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2])],
  );
  return inserted.map((row) => row.seq).sort((a, b) => a - b);
}

/** Writes events (each gets its `seq`), grouped by run in the given order. */
async function insertEvents(client: PoolClient, events: readonly NewRunEvent[], data: readonly string[]): Promise<void> {
  const byRun = new Map<string, number[]>();
  events.forEach((event, index) => {
    const list = byRun.get(event.run_id);
    if (list) list.push(index);
    else byRun.set(event.run_id, [index]);
  });
  for (const [runId, indexes] of byRun) {
    const seqs = await appendWithSeq(client, 'run_events', runId, indexes.map((index) => [events[index].at, events[index].type, data[index]] as const));
    indexes.forEach((index, place) => (events[index].seq = seqs[place]));
  }
}

function encodeEvents(runId: string | null, events: readonly NewRunEvent[]): string[] {
  return events.map((event) => {
    if (runId !== null && event.run_id !== runId) throw new TypeError(`An event of run '${event.run_id}' was passed with run '${runId}'.`);
    return JSON.stringify(event.data ?? {});
  });
}

/** The fields a run patch sets, checked and encoded: status never, unknown fields never. */
function runFields(patch: RunPatch): Array<{ column: string; sql: unknown }> {
  if ((patch as { status?: unknown }).status !== undefined) {
    throw new TypeError("A run patch cannot change 'status': use transitionRun, which checks the move and writes its event.");
  }
  return patchColumns(patch, patchableRunColumns, 'A run patch').map((column) => ({ column: runSqlColumn(column), sql: runValueToSql(column, patch[column as keyof RunPatch]) }));
}

/** `UPDATE runs SET ...` for fields (and more SET terms), returning the run, or null if no such run. */
async function updateRunRow(client: PoolClient, id: string, fields: ReadonlyArray<{ column: string; sql: unknown }>, guard = '', guardParameters: unknown[] = []): Promise<RunRecord | null> {
  const parameters: unknown[] = [id, ...guardParameters];
  const sets = fields.map((field) => {
    parameters.push(field.sql);
    return `${field.column} = $${parameters.length}`;
  });
  const sql = sets.length === 0 ? `SELECT ${runColumnList} FROM runs WHERE id = $1${guard}` : `UPDATE runs SET ${sets.join(', ')} WHERE id = $1${guard} RETURNING ${runColumnList}`;
  const { rows } = await client.query({ text: sql, values: parameters, rowMode: 'array' });
  return rows[0] ? runFromRow(rows[0] as unknown[]) : null;
}

function approvalFromRow(row: Record<string, unknown>): ApprovalRecord {
  return {
    id: row.id as string,
    session_id: row.session_id as string,
    run_id: (row.run_id as string | null) ?? null,
    agent: row.agent as string,
    tool: row.tool as string,
    argument: (row.argument as string | null) ?? null,
    risk: row.risk as string,
    summary: row.summary as string,
    status: row.status as ApprovalRecord['status'],
    created_at: row.created_at as string,
    resolved_at: (row.resolved_at as string | null) ?? null,
    resolved_by: (row.resolved_by as ApprovalRecord['resolved_by']) ?? null,
    always: row.always === true,
    owner: (row.owner as string | null) ?? null,
  };
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
 * processes on many machines. Writes are grouped into shared transactions (see
 * `createPgBatches`) and resolve once committed; reads wait for this process's earlier writes,
 * so they see them. Compare-and-set writes (transitions, claims, answers, notification
 * deliveries) lock the rows they check (`FOR UPDATE`), so of racing processes exactly one wins.
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
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 8, options: `-c search_path=${schema}${options.synchronousCommit ? '' : ' -c synchronous_commit=off'}`, connectionTimeoutMillis: 10_000 });
  // An idle connection the server dropped (a restart) must not crash the process; the pool makes a new one.
  pool.on('error', (error) => report(error));
  try {
    const client = await pool.connect();
    try {
      if (schema !== 'public') await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await migratePostgres(client, label);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  const batches = createPgBatches({ pool, reconnectMs: options.reconnectMs });
  let closed = false;

  function write<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    if (closed) return Promise.reject(new Error(`The store ${label} is closed.`));
    return batches.write(work);
  }

  /** A read after this process's earlier writes; retried while the server restarts (up to `reconnectMs`). */
  async function read<R extends pg.QueryResultRow = Record<string, unknown>>(text: string, values: unknown[] = [], rowMode?: 'array'): Promise<R[]> {
    if (closed) throw new Error(`The store ${label} is closed.`);
    await batches.settled();
    const query = rowMode ? { text, values, rowMode } : { text, values };
    // Idle connections the server dropped fail one by one; the pool then opens new ones.
    const deadline = Date.now() + (options.reconnectMs ?? 30_000);
    for (let attempt = 0; ; attempt++) {
      try {
        return (await pool.query<R>(query as pg.QueryConfig)).rows;
      } catch (error) {
        if (!isConnectionError(error) || closed || Date.now() >= deadline) throw error;
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** Math.min(attempt, 5))));
      }
    }
  }

  const store: Store = {
    description: `postgres:${label}`,

    createSession(session) {
      return write(async (client) => {
        await client.query(
          'INSERT INTO sessions (id, agent, model, created_at, status, parent_run_id, auto_resumes, user_canceled_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
          [session.id, session.agent, session.model, session.created_at, session.status, session.parent_run_id, session.auto_resumes, session.user_canceled_at],
        );
      });
    },

    async getSession(id) {
      const [row] = await read('SELECT * FROM sessions WHERE id = $1', [id]);
      return row ? sessionFromRow(row) : null;
    },

    async listSessions({ limit, primaryOnly = false } = {}) {
      const where = primaryOnly ? ' WHERE parent_run_id IS NULL' : '';
      const rows = await read(`SELECT * FROM sessions${where} ORDER BY created_at DESC, id DESC${limit === undefined ? '' : ' LIMIT $1'}`, limit === undefined ? [] : [Math.max(0, Math.floor(limit))]);
      return rows.map(sessionFromRow);
    },

    updateSession(id, patch) {
      let columns: string[];
      try {
        columns = patchColumns(patch, patchableSessionColumns, 'A session patch');
      } catch (error) {
        return Promise.reject(error);
      }
      return write(async (client) => {
        if (columns.length === 0) return;
        const sets = columns.map((column, index) => `${column} = $${index + 2}`).join(', ');
        await client.query(`UPDATE sessions SET ${sets} WHERE id = $1`, [id, ...columns.map((column) => (patch as Record<string, unknown>)[column] ?? null)]);
      });
    },

    addSessionUsage(id, usage) {
      return write(async (client) => {
        await client.query('UPDATE sessions SET input_tokens = input_tokens + $2, output_tokens = output_tokens + $3 WHERE id = $1', [id, usage.input_tokens, usage.output_tokens]);
      });
    },

    async getSessionUsage(id) {
      const [row] = await read<{ input_tokens: string; output_tokens: string }>('SELECT input_tokens, output_tokens FROM sessions WHERE id = $1', [id]);
      return row ? { input_tokens: Number(row.input_tokens), output_tokens: Number(row.output_tokens) } : null;
    },

    appendMessages(messages) {
      let contents: string[];
      try {
        contents = messages.map((message) => JSON.stringify(message.content ?? null));
      } catch (error) {
        return Promise.reject(error);
      }
      return write(async (client) => {
        const bySession = new Map<string, number[]>();
        messages.forEach((message, index) => {
          const list = bySession.get(message.session_id);
          if (list) list.push(index);
          else bySession.set(message.session_id, [index]);
        });
        const seqs: number[] = [];
        for (const [sessionId, indexes] of bySession) {
          const given = await appendWithSeq(client, 'messages', sessionId, indexes.map((index) => [messages[index].role, contents[index], messages[index].created_at] as const));
          indexes.forEach((index, place) => (seqs[index] = given[place]));
        }
        return messages.map((message, index) => ({ session_id: message.session_id, seq: seqs[index], role: message.role, content: message.content, created_at: message.created_at }));
      });
    },

    async listMessages(sessionId, { afterSeq = 0 } = {}) {
      const rows = await read('SELECT * FROM messages WHERE session_id = $1 AND seq > $2 ORDER BY seq', [sessionId, afterSeq]);
      return rows.map(messageFromRow);
    },

    updateMessageContent(sessionId, seq, content) {
      let encoded: string;
      try {
        encoded = JSON.stringify(content ?? null);
      } catch (error) {
        return Promise.reject(error);
      }
      return write(async (client) => {
        await client.query('UPDATE messages SET content = $3 WHERE session_id = $1 AND seq = $2', [sessionId, seq, encoded]);
      });
    },

    commitMessage({ session_id: sessionId, seq, role, content, created_at: createdAt, runs }) {
      let prepared: { encoded: string; fields: Array<Array<{ column: string; sql: unknown }>> };
      try {
        prepared = { encoded: JSON.stringify(content ?? null), fields: runs.map((change) => runFields(change.patch)) };
      } catch (error) {
        return Promise.reject(error);
      }
      return write(async (client) => {
        const ids = runs.map((change) => change.id);
        const { rows } = await client.query({ text: `SELECT ${runColumnList} FROM runs WHERE id = ANY($1) ORDER BY id FOR UPDATE`, values: [ids], rowMode: 'array' });
        const current = new Map((rows as unknown[][]).map((row) => [row[0] as string, runFromRow(row)]));
        const refused = runs.filter((change) => !current.has(change.id) || !change.check(copyRun(current.get(change.id)!))).map((change) => change.id);
        if (refused.length > 0) return { message: null, runs: [], refused };
        let message: MessageRecord;
        if (seq === undefined) {
          const [given] = await appendWithSeq(client, 'messages', sessionId, [[role, prepared.encoded, createdAt]]);
          message = { session_id: sessionId, seq: given, role, content, created_at: createdAt };
        } else {
          const { rows: updated } = await client.query<{ role: MessageRecord['role']; created_at: string }>(
            'UPDATE messages SET content = $3 WHERE session_id = $1 AND seq = $2 RETURNING role, created_at',
            [sessionId, seq, prepared.encoded],
          );
          if (updated.length === 0) throw new Error(`No message ${seq} in session '${sessionId}' to rewrite.`);
          message = { session_id: sessionId, seq, role: updated[0].role, content, created_at: updated[0].created_at };
        }
        const changed: Array<{ run: RunRecord; events: RunEventRecord[] }> = [];
        for (const [index, change] of runs.entries()) {
          const events = change.events(message);
          await insertEvents(client, events, encodeEvents(change.id, events));
          const run = await updateRunRow(client, change.id, prepared.fields[index]);
          changed.push({ run: run!, events: events as RunEventRecord[] });
        }
        return { message, runs: changed, refused };
      });
    },

    insertRun(run, event) {
      let values: unknown[];
      let data: string[];
      try {
        values = runToSql(run) as unknown[];
        data = encodeEvents(run.id, [event]);
      } catch (error) {
        return Promise.reject(error);
      }
      return write(async (client) => {
        try {
          await client.query(insertRunSql, values);
        } catch (error) {
          if ((error as { code?: string }).code === '23505' && (error as { constraint?: string }).constraint === 'runs_pkey') {
            throw new Error(`A run with id '${run.id}' is already stored.`, { cause: error });
          }
          throw error;
        }
        await insertEvents(client, [event], data);
      });
    },

    transitionRun({ id, from, to, patch = {}, patchFor, event }) {
      const allowed = from.filter((status) => !isFinished(status));
      let fields: Array<{ column: string; sql: unknown }>;
      let data: string[];
      try {
        fields = runFields(patch);
        data = encodeEvents(id, [event]);
      } catch (error) {
        return Promise.reject(error);
      }
      return write(async (client) => {
        if (allowed.length === 0) return null;
        let more: Array<{ column: string; sql: unknown }> = [];
        if (patchFor) {
          const { rows } = await client.query({ text: `SELECT ${runColumnList} FROM runs WHERE id = $1 FOR UPDATE`, values: [id], rowMode: 'array' });
          if (rows.length === 0) return null;
          const current = runFromRow(rows[0] as unknown[]);
          if (!allowed.includes(current.status)) return null;
          more = runFields(patchFor(copyRun(current)));
        }
        // Later fields win, as in an object spread: patchFor's over patch's.
        const merged = new Map([{ column: 'status', sql: to as unknown }, ...fields, ...more].map((field) => [field.column, field]));
        const run = await updateRunRow(client, id, [...merged.values()], ' AND status = ANY($2)', [allowed]);
        if (run === null) return null;
        await insertEvents(client, [event], data);
        return run;
      });
    },

    updateRun(id, patch, events = []) {
      let fields: Array<{ column: string; sql: unknown }>;
      let data: string[];
      try {
        fields = runFields(patch);
        data = encodeEvents(id, events);
      } catch (error) {
        return Promise.reject(error);
      }
      return write(async (client) => {
        const run = await updateRunRow(client, id, fields);
        if (run === null) return null;
        await insertEvents(client, events, data);
        return run;
      });
    },

    patchRun(id, patch, events = []) {
      let fields: Array<{ column: string; sql: unknown }>;
      let data: string[];
      try {
        fields = runFields(patch);
        data = encodeEvents(id, events);
      } catch (error) {
        return Promise.reject(error);
      }
      return write(async (client) => {
        const parameters: unknown[] = [id];
        const sets = fields.map((field) => {
          parameters.push(field.sql);
          return `${field.column} = $${parameters.length}`;
        });
        const sql = sets.length === 0 ? 'SELECT 1 FROM runs WHERE id = $1' : `UPDATE runs SET ${sets.join(', ')} WHERE id = $1`;
        const { rowCount } = await client.query(sql, parameters);
        if (!rowCount) return false;
        await insertEvents(client, events, data);
        return true;
      });
    },

    appendRunEvents(events) {
      let data: string[];
      try {
        data = encodeEvents(null, events);
      } catch (error) {
        return Promise.reject(error);
      }
      return write(async (client) => {
        await insertEvents(client, events, data);
      });
    },

    async getRun(id) {
      const [row] = await read<unknown[]>(`SELECT ${runColumnList} FROM runs WHERE id = $1`, [id], 'array');
      return row ? runFromRow(row as unknown as unknown[]) : null;
    },

    async listRuns(query) {
      const { sql, parameters } = pgRunQuery(query);
      const rows = await read<unknown[]>(sql, parameters, 'array');
      return rows.map((row) => runFromRow(row as unknown as unknown[]));
    },

    async listRunEvents(runId, { afterSeq = 0, limit } = {}) {
      const limited = limit === undefined ? '' : ' LIMIT $3';
      const rows = await read(`SELECT * FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq${limited}`, limit === undefined ? [runId, afterSeq] : [runId, afterSeq, Math.max(0, Math.floor(limit))]);
      return rows.map(runEventFromRow);
    },

    renewLeases(owner, expiresAt) {
      return write(async (client) => {
        const { rowCount } = await client.query('UPDATE runs SET lease_expires_at = $1 WHERE lease_owner = $2 AND status = ANY($3)', [expiresAt, owner, activeStatuses]);
        return rowCount ?? 0;
      });
    },

    claimRun(id, owner, expiresAt, expiredBefore) {
      return write(async (client) => {
        const { rows } = await client.query({
          text: `UPDATE runs SET lease_owner = $2, lease_expires_at = $3 WHERE id = $1 AND status = ANY($4) AND (lease_expires_at IS NULL OR lease_expires_at < $5) RETURNING ${runColumnList}`,
          values: [id, owner, expiresAt, activeStatuses, expiredBefore],
          rowMode: 'array',
        });
        return rows[0] ? runFromRow(rows[0] as unknown[]) : null;
      });
    },

    insertApproval(approval) {
      return write(async (client) => {
        await client.query(`INSERT INTO approvals (${approvalColumns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, [
          approval.id,
          approval.session_id,
          approval.run_id,
          approval.agent,
          approval.tool,
          approval.argument,
          approval.risk,
          approval.summary,
          approval.status,
          approval.created_at,
          approval.resolved_at,
          approval.resolved_by,
          approval.always,
          approval.owner,
        ]);
      });
    },

    async getApproval(id) {
      const [row] = await read(`SELECT ${approvalColumns} FROM approvals WHERE id = $1`, [id]);
      return row ? approvalFromRow(row) : null;
    },

    async listApprovals({ statuses, session_id, run_id, owner, limit } = {}) {
      if (statuses !== undefined && statuses.length === 0) return [];
      const where: string[] = [];
      const parameters: unknown[] = [];
      if (statuses !== undefined) {
        parameters.push([...statuses]);
        where.push(`status = ANY($${parameters.length})`);
      }
      for (const [column, value] of [['session_id', session_id], ['run_id', run_id], ['owner', owner]] as const) {
        if (value === undefined) continue;
        parameters.push(value);
        where.push(`${column} = $${parameters.length}`);
      }
      let sql = `SELECT ${approvalColumns} FROM approvals${where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`} ORDER BY created_at, id`;
      if (limit !== undefined) {
        parameters.push(Math.max(0, Math.floor(limit)));
        sql += ` LIMIT $${parameters.length}`;
      }
      return (await read(sql, parameters)).map(approvalFromRow);
    },

    resolveApproval({ id, status, by, at, rule }) {
      return write(async (client) => {
        const { rows } = await client.query(
          `UPDATE approvals SET status = $2, resolved_by = $3, resolved_at = $4, always = $5 WHERE id = $1 AND status = 'pending' RETURNING ${approvalColumns}`,
          [id, status, by, at, rule !== undefined],
        );
        if (rows.length === 0) return null;
        const approval = approvalFromRow(rows[0]);
        if (rule) {
          await client.query(
            `INSERT INTO session_rules (session_id, rule, decision, created_at, approval_id) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (session_id, rule) DO UPDATE SET decision = EXCLUDED.decision, created_at = EXCLUDED.created_at, approval_id = EXCLUDED.approval_id`,
            [approval.session_id, rule.rule, rule.decision, at, id],
          );
        }
        return approval;
      });
    },

    async listSessionRules(sessionId) {
      const rows = await read('SELECT session_id, rule, decision, created_at, approval_id FROM session_rules WHERE session_id = $1 ORDER BY created_at, rule', [sessionId]);
      return rows.map((row) => ({ ...(row as unknown as SessionRuleRecord) }));
    },

    async flush() {
      if (closed) return;
      await batches.settled();
    },

    async close() {
      if (closed) return;
      await batches.close();
      closed = true;
      await pool.end();
    },
  };
  return store;
}

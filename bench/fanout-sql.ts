import { join } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { openDatabase } from '../src/store/sqlite/open-database.ts';
import { runColumnList, runColumns } from '../src/store/core/run-rows.ts';

/**
 * The SQL alone: the rows one cadre round stored, written again into a fresh database file by
 * plain prepared statements, with no cadre and no AI SDK around them. What any store that keeps
 * the same rows in SQLite on the loop's thread pays at least.
 */
export interface SqlReplay {
  round(): void;
  /** Throws unless the file holds every round's rows. */
  check(): void;
  close(): void;
}

type Row = Record<string, SQLInputValue>;

/** One write of the round's timeline: a session, a run, a run's end, a message or an event. */
type Write = (prefix: string) => void;

/**
 * Reads what cadre stored for the parent session `sessionId` (its messages, its runs with their
 * child sessions, messages and events) from the database at `sourcePath`, and returns a replay
 * that writes the same rows into `folder` each round, with the round's prefix on every id. The
 * replay follows the stored order: a session is inserted before its first message, a run is
 * inserted as it starts and updated to its stored end as its `run-end` event is written, and the
 * round's writes are split into `transactions` commits (cadre's group commit makes 4–5 in a
 * round at N=200).
 */
export function createSqlReplay({
  sourcePath,
  sessionId,
  folder,
  transactions,
}: {
  sourcePath: string;
  sessionId: string;
  folder: string;
  transactions: number;
}): SqlReplay {
  const source = new DatabaseSync(sourcePath, { readOnly: true });
  const runs = source.prepare('SELECT * FROM runs WHERE parent_session_id = ? ORDER BY id').all(sessionId) as Row[];
  const sessionIds = [sessionId, ...runs.map((run) => run.child_session_id as string)];
  const sessions = new Map(sessionIds.map((id) => [id, source.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as Row]));
  const messages = sessionIds.flatMap((id) => source.prepare('SELECT * FROM messages WHERE session_id = ? ORDER BY seq').all(id) as Row[]);
  const events = runs.flatMap((run) => source.prepare('SELECT * FROM run_events WHERE run_id = ? ORDER BY seq').all(run.id as string) as Row[]);
  source.close();

  const database = openDatabase(join(folder, 'sql-alone.db'), 5000);
  const insertSession = database.prepare(
    'INSERT INTO sessions (id, agent, model, created_at, status, parent_run_id, auto_resumes, user_canceled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insertMessage = database.prepare('INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)');
  const insertEvent = database.prepare('INSERT INTO run_events (run_id, seq, at, type, data, last_seq) VALUES (?, ?, ?, ?, ?, ?)');
  const insertRun = database.prepare(`INSERT INTO runs (${runColumnList}) VALUES (${runColumns.map(() => '?').join(', ')})`);
  const endColumns = [
    'status',
    'turns',
    'ended_at',
    'consumed_at',
    'last_activity',
    'result',
    'partial_result',
    'error',
    'usage',
    'notification',
    'lease_owner',
    'lease_expires_at',
  ];
  const endRun = database.prepare(`UPDATE runs SET ${endColumns.map((column) => `${column} = ?`).join(', ')} WHERE id = ?`);
  const prefixed = (prefix: string, id: SQLInputValue) => (id === null ? null : prefix + (id as string));

  // The round's timeline, in the order cadre wrote it: by time, a run's events and a session's
  // messages in their seq order.
  const timed: Array<{ at: string; write: Write }> = [];
  const sessionWritten = new Set<string>();
  for (const message of messages) {
    const id = message.session_id as string;
    const session = sessions.get(id)!;
    if (!sessionWritten.has(id)) {
      sessionWritten.add(id);
      timed.push({
        at: session.created_at as string,
        write: (p) =>
          insertSession.run(
            p + id,
            session.agent,
            session.model,
            session.created_at,
            session.status,
            prefixed(p, session.parent_run_id),
            session.auto_resumes,
            session.user_canceled_at,
          ),
      });
    }
    timed.push({ at: message.created_at as string, write: (p) => insertMessage.run(p + id, message.seq, message.role, message.content, message.created_at) });
  }
  const columns: readonly string[] = runColumns;
  const idColumns = new Set(['id', 'parent_session_id', 'child_session_id', 'parent_run_id']);
  for (const run of runs) {
    // As it starts: running, leased, nothing of its end yet.
    const startValues: Row = {
      status: 'running',
      turns: 0,
      usage: '{"input_tokens":0,"output_tokens":0}',
      lease_owner: 'bench',
      lease_expires_at: run.created_at,
    };
    const started = columns.map((column) => (column in startValues ? startValues[column] : endColumns.includes(column) ? null : run[column]));
    timed.push({
      at: run.created_at as string,
      write: (p) => insertRun.run(...started.map((value, index) => (idColumns.has(columns[index]) ? prefixed(p, value) : value))),
    });
    timed.push({ at: run.ended_at as string, write: (p) => endRun.run(...endColumns.map((column) => run[column]), p + (run.id as string)) });
  }
  // An event row may hold several events of its run (written in one commit), as cadre stored it.
  for (const event of events) {
    timed.push({
      at: event.at as string,
      write: (p) => insertEvent.run(p + (event.run_id as string), event.seq, event.at, event.type, event.data, event.last_seq),
    });
  }
  // A stable sort keeps each key's rows in seq order and a run's insert before its events.
  timed.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const writes = timed.map((entry) => entry.write);
  const begin = database.prepare('BEGIN IMMEDIATE');
  const commit = database.prepare('COMMIT');
  let rounds = 0;

  return {
    round() {
      const prefix = `r${rounds++}_`;
      const perTransaction = Math.ceil(writes.length / transactions);
      for (let start = 0; start < writes.length; start += perTransaction) {
        begin.run();
        const end = Math.min(writes.length, start + perTransaction);
        for (let index = start; index < end; index++) writes[index](prefix);
        commit.run();
      }
    },
    check() {
      const expected: Record<string, number> = { sessions: sessions.size, messages: messages.length, runs: runs.length, run_events: events.length };
      for (const [table, count] of Object.entries(expected)) {
        const { stored } = database.prepare(`SELECT count(*) AS stored FROM ${table}`).get() as { stored: number };
        if (stored !== count * rounds) throw new Error(`The SQL replay wrote ${stored} rows to ${table}, not ${count * rounds}.`);
      }
    },
    close() {
      database.close();
    },
  };
}

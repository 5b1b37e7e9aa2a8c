import type { StatementSync } from 'node:sqlite';
import type { MessageRecord, RunEventRecord } from '../records.ts';
import type { Store } from '../store.ts';
import { messagesFromRows, type AnswerIndex, type MessageRow } from '../core/result-refs.ts';
import { mismatchedEvent, runFields, whenValid } from '../core/run-fields.ts';
import { copyRun } from '../core/run-rows.ts';
import type { HeldRuns } from './held-runs.ts';
import type { SqliteHeldWrites } from './sqlite-held-writes.ts';

type MessageMethods = Pick<Store, 'appendMessages' | 'listMessages' | 'updateMessageContent' | 'commitMessage'>;

/** What the message methods need of the SQLite store. */
export interface SqliteMessagesContext {
  prepared: (sql: string) => StatementSync;
  write: <T>(work: () => T) => Promise<T>;
  ensureOpen: () => void;
  held: SqliteHeldWrites;
  heldRuns: HeldRuns;
  /** The answers of finished runs written lately, which messages are stored referring to (see `createAnswerIndex`). */
  answers: AnswerIndex;
}

/**
 * A session's messages in the SQLite store: appends are held until the commit (see
 * `createSqliteHeldWrites`); a notification's message is written with its runs' changes, which
 * are checked against the held runs inside the transaction (it holds the write lock).
 */
export function createSqliteMessages({ prepared, write, ensureOpen, held, heldRuns, answers }: SqliteMessagesContext): MessageMethods {
  /** The result texts of runs (held ones as held), for the messages that refer to them. */
  function resultTexts(runIds: ReadonlySet<string>): Map<string, string | null> {
    const texts = new Map<string, string | null>();
    const stored: string[] = [];
    for (const id of runIds) {
      if (heldRuns.has(id)) texts.set(id, heldRuns.read(id)?.result?.text ?? null);
      else stored.push(id);
    }
    if (stored.length > 0) {
      const rows = prepared("SELECT id, json_extract(result, '$.text') AS text FROM runs WHERE id IN (SELECT value FROM json_each(?))").all(
        JSON.stringify(stored),
      );
      for (const row of rows as Array<{ id: string; text: string | null }>) texts.set(row.id, row.text);
    }
    return texts;
  }

  /** Rewrites message `seq`: in place while it is held, else in SQL. Its role and time as stored, or null when there is none. */
  function rewrite(sessionId: string, seq: number, content: string, returning: boolean): Pick<MessageRecord, 'role' | 'created_at'> | null {
    const row = held.messages.find(sessionId, seq);
    if (row) {
      row.content = content;
      return { role: row.role as MessageRecord['role'], created_at: row.created_at };
    }
    if (!returning) {
      prepared('UPDATE messages SET content = ? WHERE session_id = ? AND seq = ?').run(content, sessionId, seq);
      return null;
    }
    const stored = prepared('UPDATE messages SET content = ? WHERE session_id = ? AND seq = ? RETURNING role, created_at').get(content, sessionId, seq);
    return (stored as Pick<MessageRecord, 'role' | 'created_at'> | undefined) ?? null;
  }

  return {
    appendMessages(messages) {
      return write(() => {
        // Checked and encoded before any is held, so a bad message holds none of them.
        const contents = messages.map((message) => answers.encode(message.session_id, message.content, message.role === 'user'));
        return messages.map((message, index) => {
          const seq = held.holdMessage(message, contents[index]);
          return { session_id: message.session_id, seq, role: message.role, content: message.content, created_at: message.created_at };
        });
      });
    },

    updateMessageContent(sessionId, seq, content) {
      return write(() => void rewrite(sessionId, seq, answers.encode(sessionId, content, false), false));
    },

    async listMessages(sessionId, { afterSeq = 0 } = {}) {
      ensureOpen();
      const rows = prepared('SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq').all(sessionId, afterSeq) as unknown as MessageRow[];
      // Held messages always come after the stored ones: every message of this process is held first.
      for (const row of held.messages.after(sessionId, afterSeq))
        rows.push({ session_id: row.key, seq: row.seq, role: row.role, content: row.content, created_at: row.created_at });
      return messagesFromRows(rows, resultTexts);
    },

    commitMessage({ session_id: sessionId, seq, role, content, created_at: createdAt, runs }) {
      const check = () => ({ encoded: answers.encode(sessionId, content, role === 'user'), fields: runs.map((change) => runFields(change.patch)) });
      return whenValid(check, ({ encoded, fields }) =>
        write(() => {
          const refused = runs
            .filter((change) => {
              const current = heldRuns.load(change.id);
              return current === null || !change.check(copyRun(current));
            })
            .map((change) => change.id);
          if (refused.length > 0) return { message: null, runs: [], refused };
          let message: MessageRecord;
          if (seq === undefined) {
            message = {
              session_id: sessionId,
              seq: held.holdMessage({ session_id: sessionId, role, created_at: createdAt }, encoded),
              role,
              content,
              created_at: createdAt,
            };
          } else {
            const stored = rewrite(sessionId, seq, encoded, true);
            if (stored === null) throw new Error(`No message ${seq} in session '${sessionId}' to rewrite.`);
            message = { session_id: sessionId, seq, role: stored.role, content, created_at: stored.created_at };
          }
          const changed = runs.map((change, index) => {
            const events = change.events(message);
            for (const event of events) if (event.run_id !== change.id) throw mismatchedEvent(change.id, event);
            held.holdEvents(events);
            heldRuns.change(change.id, fields[index]);
            const run = heldRuns.load(change.id)!;
            answers.note(run);
            return { run: copyRun(run), events: events as RunEventRecord[] };
          });
          return { message, runs: changed, refused };
        }),
      );
    },
  };
}

import type { StatementSync } from 'node:sqlite';
import type { MessageRecord, RunEventRecord } from '../records.ts';
import type { Store } from '../store.ts';
import { messageFromRow } from '../core/record-rows.ts';
import { mismatchedEvent, runFields, whenValid } from '../core/run-fields.ts';
import { copyRun } from '../core/run-rows.ts';
import type { HeldRuns } from './held-runs.ts';
import { heldMessageRecord, type SqliteHeldWrites } from './sqlite-held-writes.ts';

type MessageMethods = Pick<Store, 'appendMessages' | 'listMessages' | 'updateMessageContent' | 'commitMessage'>;

/** What the message methods need of the SQLite store. */
export interface SqliteMessagesContext {
  prepared: (sql: string) => StatementSync;
  write: <T>(work: () => T) => Promise<T>;
  ensureOpen: () => void;
  held: SqliteHeldWrites;
  heldRuns: HeldRuns;
}

/**
 * A session's messages in the SQLite store: appends are held until the commit (see
 * `createSqliteHeldWrites`); a notification's message is written with its runs' changes, which
 * are checked against the held runs inside the transaction (it holds the write lock).
 */
export function createSqliteMessages({ prepared, write, ensureOpen, held, heldRuns }: SqliteMessagesContext): MessageMethods {
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
        const contents = messages.map((message) => JSON.stringify(message.content ?? null));
        return messages.map((message, index) => {
          const seq = held.holdMessage(message, contents[index]);
          return { session_id: message.session_id, seq, role: message.role, content: message.content, created_at: message.created_at };
        });
      });
    },

    updateMessageContent(sessionId, seq, content) {
      return write(() => void rewrite(sessionId, seq, JSON.stringify(content ?? null), false));
    },

    async listMessages(sessionId, { afterSeq = 0 } = {}) {
      ensureOpen();
      const rows = prepared('SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq').all(sessionId, afterSeq);
      const stored = rows.map((row) => messageFromRow(row as Record<string, unknown>));
      // Held messages always come after the stored ones: every message of this process is held first.
      return stored.concat(held.messages.after(sessionId, afterSeq).map(heldMessageRecord));
    },

    commitMessage({ session_id: sessionId, seq, role, content, created_at: createdAt, runs }) {
      const check = () => ({ encoded: JSON.stringify(content ?? null), fields: runs.map((change) => runFields(change.patch)) });
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
            return { run: copyRun(heldRuns.load(change.id)!), events: events as RunEventRecord[] };
          });
          return { message, runs: changed, refused };
        }),
      );
    },
  };
}

import type pg from 'pg';
import type { MessageRecord, RunEventRecord } from '../records.ts';
import { encodeEvents, runFields, whenValid, type RunField } from '../core/run-fields.ts';
import { copyRun } from '../core/run-rows.ts';
import type { MessageCommit, MessageCommitResult, Store } from '../store.ts';
import { appendWithSeq, changeRunOp, groupBy, lockRunsOp } from './pg-run-writes.ts';
import { messagesOp } from './pg-lookups.ts';
import type { PgMerge } from './pg-outbox.ts';
import type { PgStoreContext } from './pg-store-context.ts';

type MessageMethods = Pick<Store, 'appendMessages' | 'listMessages' | 'updateMessageContent' | 'commitMessage'>;

/**
 * A session's messages on Postgres: appends to a session whose last seq is known are held (see
 * `createPgBatches`); a notification's message is committed with its runs' delivery marks.
 */
export function createPgMessages({ batches, name, lookup, ordered, refusal, messageSeqs, learnEvents, answers }: PgStoreContext): MessageMethods {
  /**
   * Reads first (locked runs, the message's place) and writes in one go after, so that
   * deliveries in one batch cost one more round trip together.
   */
  function commit(
    { session_id: sessionId, seq, role, content, created_at: createdAt, runs }: MessageCommit,
    prepared: { encoded: string; fields: RunField[][] },
  ): Promise<MessageCommitResult> {
    const keys = [`s:${sessionId}`, ...runs.map((change) => `r:${change.id}`)];
    // Read first (locked runs, the message's place) and written in one go after, so that
    // deliveries in one batch cost one more round trip together.
    const readFirst = (client: pg.ClientBase, merge: PgMerge) =>
      Promise.all([
        merge(lockRunsOp(runs.map((change) => change.id))),
        client.query<{ seq: number; role: MessageRecord['role'] | null; created_at: string | null }>(
          seq === undefined
            ? name({ text: 'SELECT COALESCE(MAX(seq), 0) AS seq, NULL AS role, NULL AS created_at FROM messages WHERE session_id = $1', values: [sessionId] })
            : name({ text: 'SELECT seq, role, created_at FROM messages WHERE session_id = $1 AND seq = $2 FOR UPDATE', values: [sessionId, seq] }),
        ),
      ]);
    return ordered(keys, () =>
      batches
        .write(
          (
            client,
            [
              current,
              {
                rows: [stored],
              },
            ],
            merge,
          ): Promise<MessageCommitResult> => {
            const refused = runs.filter((change) => !current.has(change.id) || !change.check(copyRun(current.get(change.id)!))).map((change) => change.id);
            if (refused.length > 0) return Promise.resolve({ message: null, runs: [], refused });
            let message: MessageRecord;
            let written: Promise<unknown>;
            if (seq === undefined) {
              // Another process taking this seq meanwhile makes the batch retry, reading it again.
              message = { session_id: sessionId, seq: stored.seq + 1, role, content, created_at: createdAt };
              written = client.query(
                name({
                  text: 'INSERT INTO messages (session_id, seq, role, content, created_at) VALUES ($1, $2, $3, $4, $5)',
                  values: [sessionId, message.seq, role, prepared.encoded, createdAt],
                }),
              );
            } else {
              if (stored === undefined) return Promise.reject(new Error(`No message ${seq} in session '${sessionId}' to rewrite.`));
              message = { session_id: sessionId, seq, role: stored.role!, content, created_at: stored.created_at! };
              written = client.query(
                name({ text: 'UPDATE messages SET content = $3 WHERE session_id = $1 AND seq = $2', values: [sessionId, seq, prepared.encoded] }),
              );
            }
            const changed = runs.map((change, index) => {
              const events = change.events(message);
              const data = encodeEvents(change.id, events);
              return merge(changeRunOp({ id: change.id, fields: prepared.fields[index], events, data })).then(({ run, seqs }) => {
                seqs.forEach((given, place) => (events[place].seq = given));
                return { run: run!, events: events as RunEventRecord[] };
              });
            });
            return Promise.all([written, ...changed]).then(([, ...changes]) => ({ message, runs: changes as MessageCommitResult['runs'], refused }));
          },
          { read: readFirst },
        )
        .then((result) => {
          if (result.message) messageSeqs.learn(sessionId, result.message.seq);
          for (const change of result.runs) {
            learnEvents(change.events);
            answers.note(change.run);
          }
          return result;
        }),
    );
  }

  return {
    appendMessages(messages) {
      if (messages.length === 0) return refusal() ? Promise.reject(refusal()) : Promise.resolve([]);
      const sessions = [...new Set(messages.map((message) => message.session_id))];
      return whenValid(
        () => messages.map((message) => answers.encode(message.session_id, message.content, message.role === 'user')),
        (contents) =>
          ordered(
            sessions.map((id) => `s:${id}`),
            (): MessageRecord[] | Promise<MessageRecord[]> => {
              if (sessions.every((id) => messageSeqs.has(id))) {
                const segment = batches.held();
                return messages.map((message, index) => {
                  const seq = messageSeqs.next(message.session_id);
                  const record: MessageRecord = {
                    session_id: message.session_id,
                    seq,
                    role: message.role,
                    content: message.content,
                    created_at: message.created_at,
                  };
                  segment.messages.hold({ key: message.session_id, seq, role: message.role, content: contents[index], created_at: message.created_at, record });
                  return record;
                });
              }
              return batches
                .write(async (client) => {
                  const seqs: number[] = [];
                  await Promise.all(
                    [...groupBy(messages, (message) => message.session_id)].map(([sessionId, indexes]) =>
                      appendWithSeq(
                        client,
                        name,
                        'messages',
                        sessionId,
                        indexes.map((index) => [messages[index].role, contents[index], messages[index].created_at] as const),
                      ).then((given) => {
                        indexes.forEach((index, place) => (seqs[index] = given[place]));
                      }),
                    ),
                  );
                  return messages.map((message, index) => ({
                    session_id: message.session_id,
                    seq: seqs[index],
                    role: message.role,
                    content: message.content,
                    created_at: message.created_at,
                  }));
                })
                .then((records) => {
                  for (const record of records) messageSeqs.learn(record.session_id, record.seq);
                  return records;
                });
            },
          ),
      );
    },

    listMessages(sessionId, { afterSeq = 0 } = {}) {
      return lookup(messagesOp(sessionId, afterSeq));
    },

    updateMessageContent(sessionId, seq, content) {
      return whenValid(
        () => answers.encode(sessionId, content, false),
        (encoded) =>
          ordered([`s:${sessionId}`], () => {
            const segment = batches.held();
            // A message held in this segment is rewritten in place: one statement writes a row once.
            const held = segment.messages.find(sessionId, seq);
            if (held) held.content = encoded;
            else segment.contents.set(`${sessionId}\u0000${seq}`, [sessionId, seq, encoded]);
          }),
      );
    },

    commitMessage({ session_id: sessionId, seq, role, content, created_at: createdAt, runs }) {
      const check = () => ({ encoded: answers.encode(sessionId, content, role === 'user'), fields: runs.map((change) => runFields(change.patch)) });
      return whenValid(check, (prepared) => commit({ session_id: sessionId, seq, role, content, created_at: createdAt, runs }, prepared));
    },
  };
}

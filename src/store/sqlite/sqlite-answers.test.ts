import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import type { NewMessage, RunResult } from '../records.ts';
import type { Store } from '../store.ts';
import { longAnswer } from '../store-answers.case.ts';
import { eventFixture, runFixture, sessionFixture } from '../store-fixtures.ts';
import { testFiles } from './sqlite-test-support.ts';
import { createSqliteStore } from './sqlite-store.ts';

const newFile = testFiles('cadre-answers-');
const phrase = 'Every line is parsed once.';
const result: RunResult = { text: longAnswer, truncated: false, original_length: longAnswer.length };

function lastMessage(text: string): NewMessage {
  return { session_id: 'ses_child_run_1', role: 'assistant', content: [{ type: 'text', text }], created_at: '2025-01-01T00:00:04.000Z' };
}

function parentToolResult(text: string): NewMessage {
  return {
    session_id: 'ses_1',
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'agent', output: { type: 'text', value: `run_id: run_1\nstatus: completed\n\n${text}` } }],
    created_at: '2025-01-01T00:00:09.000Z',
  };
}

async function runningRun(store: Store): Promise<void> {
  await store.createSession(sessionFixture({ id: 'ses_1' }));
  await store.insertRun(runFixture({ id: 'run_1' }), eventFixture('run_1', 'run-queued'));
  await store.transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
}

function finish(store: Store, check?: () => boolean) {
  return store.transitionRun({ id: 'run_1', from: ['running'], to: 'completed', patch: { result }, check, event: eventFixture('run_1', 'run-end') });
}

/** How many stored texts (message contents, run results) of the file hold the answer. */
function copiesIn(path: string): { messages: number; runs: number } {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    const count = (sql: string) => (database.prepare(sql).get(`%${phrase}%`) as { count: number }).count;
    return {
      messages: count('SELECT COUNT(*) AS count FROM messages WHERE content LIKE ?'),
      runs: count('SELECT COUNT(*) AS count FROM runs WHERE result LIKE ?'),
    };
  } finally {
    database.close();
  }
}

describe("a subagent's answer in a SQLite file", () => {
  it('is stored once when its last message is committed with its result: the transcript and the parent refer to it', async () => {
    const path = newFile();
    // One transaction however slow the machine: the last message is still held when the run ends.
    const store = createSqliteStore({ path, maxBatchMs: 60_000 });
    await runningRun(store);
    const appended = store.appendMessages([lastMessage(longAnswer)]);
    await finish(store);
    await appended;
    await store.appendMessages([parentToolResult(longAnswer)]);
    await store.close();
    expect(copiesIn(path)).toEqual({ messages: 0, runs: 1 });
    const reopened = createSqliteStore({ path });
    expect((await reopened.listMessages('ses_child_run_1')).map((message) => message.content)).toEqual([lastMessage(longAnswer).content]);
    expect((await reopened.listMessages('ses_1')).map((message) => message.content)).toEqual([parentToolResult(longAnswer).content]);
    await reopened.close();
  });

  it('keeps the last message whole when it was committed before the result, or the run did not end', async () => {
    const path = newFile();
    const store = createSqliteStore({ path });
    await runningRun(store);
    await store.appendMessages([lastMessage(longAnswer)]);
    // A message still waits for the run: the end is refused, and the message must stay as written.
    const appended = store.appendMessages([lastMessage(longAnswer)]);
    expect(await finish(store, () => false)).toBeNull();
    await appended;
    await store.flush();
    expect(copiesIn(path).messages).toBe(2);
    // Committed before the end: it stays whole too.
    expect((await finish(store))?.status).toBe('completed');
    await store.close();
    expect(copiesIn(path)).toEqual({ messages: 2, runs: 1 });
  });

  it('reads back the reference of a message held in the open transaction', async () => {
    const store = createSqliteStore({ path: newFile(), maxBatchMs: 60_000 });
    await runningRun(store);
    void store.appendMessages([lastMessage(longAnswer)]);
    void finish(store);
    // Nothing committed yet: the held message refers to the held run.
    expect((await store.listMessages('ses_child_run_1'))[0].content).toEqual(lastMessage(longAnswer).content);
    await store.close();
  });

  it('refers to the answer of a run another process ended, once this one read the run, and that process reads it back', async () => {
    const path = newFile();
    const worker = createSqliteStore({ path });
    const host = createSqliteStore({ path });
    await runningRun(worker);
    await finish(worker);
    await worker.flush();
    expect((await host.getRun('run_1'))?.result).toEqual(result);
    await host.appendMessages([parentToolResult(longAnswer)]);
    await host.flush();
    expect((await worker.listMessages('ses_1')).map((message) => message.content)).toEqual([parentToolResult(longAnswer).content]);
    await Promise.all([worker.close(), host.close()]);
    expect(copiesIn(path)).toEqual({ messages: 0, runs: 1 });
  });
});

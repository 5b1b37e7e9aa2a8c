import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../agents/agent-definition.ts';
import { createCadre } from '../runtime/create-cadre.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel } from '../testing/index.ts';
import { exportSession } from './export-session.ts';

const answer = (part: string) => `Part ${part} checked: ${'every line is read once and "kept" \\ as is. '.repeat(40)}`;

/** A parent that fans out to two subagents; the worker answers at length. */
async function writeFanOut(path: string): Promise<string[]> {
  let counter = 0;
  const model = scriptedLanguageModel([
    { when: { system_includes: 'Worker agent' }, turns: [{ text: answer('{{task}}') }] },
    {
      turns: [
        {
          tool_calls: [
            { name: 'agent', arguments: { agent: 'worker', task: 'a', description: 'part a' } },
            { name: 'agent', arguments: { agent: 'worker', task: 'b', description: 'part b' } },
          ],
        },
        { text: 'All parts checked.' },
      ],
    },
  ]);
  const store = createSqliteStore({ path });
  const cadre = createCadre({
    store,
    model,
    agents: [defineAgent({ name: 'worker', description: 'Checks a part.', system: 'Worker agent.', tools: [], mode: 'subagent' })],
    tools: {},
    now: () => '2025-03-01T00:00:00.000Z',
    newId: (prefix) => `${prefix}_${String(++counter).padStart(4, '0')}`,
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  const session = await cadre.createSession();
  await cadre.send(session.id, 'Check every part.');
  await cadre.waitForIdle(session.id);
  await cadre.close();
  await store.close();
  const database = new DatabaseSync(path, { readOnly: true });
  const ids = (database.prepare('SELECT id FROM sessions ORDER BY id').all() as Array<{ id: string }>).map((row) => row.id);
  database.close();
  return ids;
}

/** Every session's export (format version 1), as the bytes `cadre export` writes. */
async function exportsOf(path: string, sessions: readonly string[]): Promise<string> {
  const store = createSqliteStore({ path });
  const documents: unknown[] = [];
  for (const id of sessions) documents.push(await exportSession(store, id, { now: () => '2025-03-02T00:00:00.000Z' }));
  await store.close();
  return JSON.stringify(documents, null, 2);
}

describe("an export of a database with subagents' answers stored once", () => {
  it('is byte for byte the export of the same data with every answer stored in full', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'cadre-export-answers-')), 'cadre.db');
    const sessions = await writeFanOut(path);
    const referenced = await exportsOf(path, sessions);

    // The answers are stored once: messages that repeated them refer to their runs.
    const database = new DatabaseSync(path);
    const holding = (text: string) =>
      (database.prepare('SELECT COUNT(*) AS count FROM messages WHERE instr(content, ?) > 0').get(text) as { count: number }).count;
    const refs = database.prepare('SELECT session_id, seq FROM messages WHERE content LIKE \'{"cadre_result_of":%\'').all() as Array<{
      session_id: string;
      seq: number;
    }>;
    // The parent's tool result (both answers), and each run's last message when it was committed with the run's end.
    expect(refs.length).toBeGreaterThanOrEqual(1);
    expect(holding('Part a checked')).toBeLessThanOrEqual(1);
    expect(holding('Part b checked')).toBeLessThanOrEqual(1);
    expect(referenced).toContain('Part a checked');

    // Every message as a build that stores answers in full would have it: the content as read back.
    const store = createSqliteStore({ path });
    const full = new Map<string, string>();
    for (const { session_id: sessionId, seq } of refs) {
      const message = (await store.listMessages(sessionId)).find((each) => each.seq === seq)!;
      full.set(`${sessionId} ${seq}`, JSON.stringify(message.content));
    }
    await store.close();
    for (const { session_id: sessionId, seq } of refs) {
      database.prepare('UPDATE messages SET content = ? WHERE session_id = ? AND seq = ?').run(full.get(`${sessionId} ${seq}`)!, sessionId, seq);
    }
    // In full: each answer in its run's last message and in the parent's tool result.
    expect([holding('Part a checked'), holding('Part b checked')]).toEqual([2, 2]);
    database.close();
    expect(await exportsOf(path, sessions)).toBe(referenced);
  });
});

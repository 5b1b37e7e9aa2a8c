import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { exportSession } from '../../export/export-session.ts';
import { eventFixture, runFixture } from '../store-fixtures.ts';
import { latestVersion } from './migrations.ts';
import { createSqliteStore } from './sqlite-store.ts';

/**
 * `test/fixtures/store-v13/cadre.db` was written by cadre at main 22d2ea9 (schema version 13, the
 * last that stores a subagent's answer three times): a parent session that fanned out to two
 * subagents (`ses_0002`, answers of 2,000 characters from `bench/bench-model.ts`) and one with a
 * background run (`ses_0008`), with a fixed clock and counter ids; `exports.json` is what that
 * build exported from it (`exportSession`, `now` fixed, `JSON.stringify(exports, null, 2)`).
 * Neither is regenerated: they stand for a user's database.
 */
const fixtures = fileURLToPath(new URL('../../../test/fixtures/store-v13/', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'cadre-older-answers-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const now = () => '2025-03-02T00:00:00.000Z';
const answer = 'The task is done and checked. The task is done and checked.';

let copies = 0;
function olderDatabase(): string {
  copies++;
  mkdirSync(join(folder, `copy-${copies}`));
  const path = join(folder, `copy-${copies}`, 'cadre.db');
  copyFileSync(join(fixtures, 'cadre.db'), path);
  return path;
}

function read<T>(path: string, sql: string, ...values: string[]): T {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    return database.prepare(sql).get(...values) as T;
  } finally {
    database.close();
  }
}

/** How many message contents of the file hold an answer in full. */
const fullMessages = (path: string) => read<{ count: number }>(path, 'SELECT COUNT(*) AS count FROM messages WHERE instr(content, ?) > 0', answer).count;

describe('a database that stores answers three times (schema 13)', () => {
  it('is upgraded after a copy, left as it was, and exports byte for byte as the cadre that wrote it did', async () => {
    const path = olderDatabase();
    const before = fullMessages(path);
    // The two runs' last messages and the parent's tool result (holding both), the background run's
    // last message and its notification (whose summary starts with it).
    expect(before).toBe(5);
    const warnings: string[] = [];
    const store = createSqliteStore({ path, onWarning: (message) => warnings.push(message) });
    const backup = `${path}.bak-v13`;
    expect(warnings).toEqual([
      `The database ${path} was upgraded from schema version 13 to ${latestVersion}; older cadre builds cannot open it now. A copy of it as it was is at ${backup}.`,
    ]);
    expect(existsSync(backup)).toBe(true);
    expect(read<{ user_version: number }>(backup, 'PRAGMA user_version').user_version).toBe(13);

    const expected = readFileSync(join(fixtures, 'exports.json'), 'utf8');
    const exported: Record<string, unknown> = {};
    for (const id of Object.keys(JSON.parse(expected) as object)) exported[id] = await exportSession(store, id, { now });
    expect(`${JSON.stringify(exported, null, 2)}\n`).toBe(expected);
    await store.close();
    // No rewrite: the rows stored in full stay so.
    expect(fullMessages(path)).toBe(before);
    expect(read<{ user_version: number }>(path, 'PRAGMA user_version').user_version).toBe(latestVersion);
  });

  it('takes new answers stored once beside the old ones, and reads both', async () => {
    const path = olderDatabase();
    const store = createSqliteStore({ path });
    const parentBefore = await store.listMessages('ses_0002');
    const text = `A later answer. ${answer.repeat(10)}`;
    await store.insertRun(
      runFixture({ id: 'run_later', parent_session_id: 'ses_0002', child_session_id: 'ses_later', tool_call_id: 'call_later', status: 'running' }),
      eventFixture('run_later', 'run-start'),
    );
    await store.transitionRun({
      id: 'run_later',
      from: ['running'],
      to: 'completed',
      patch: { result: { text, truncated: false, original_length: text.length } },
      event: eventFixture('run_later', 'run-end'),
    });
    const content = [{ type: 'tool-result', toolCallId: 'call_later', toolName: 'agent', output: { type: 'text', value: `run_id: run_later\n\n${text}` } }];
    await store.appendMessages([{ session_id: 'ses_0002', role: 'tool', content, created_at: now() }]);
    await store.close();
    expect(read<{ content: string }>(path, "SELECT content FROM messages WHERE session_id = 'ses_0002' ORDER BY seq DESC LIMIT 1").content).toMatch(
      /^\{"cadre_result_of":\["run_later"\]/,
    );
    const reopened = createSqliteStore({ path });
    const parent = await reopened.listMessages('ses_0002');
    expect(parent.slice(0, -1)).toEqual(parentBefore);
    expect(parent.at(-1)?.content).toEqual(content);
    await reopened.close();
  });
});

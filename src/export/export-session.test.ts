import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/config-error.ts';
import { exportSession } from './export-session.ts';
import { renderMarkdownExport } from './render-markdown-export.ts';
import { fakeApiKey, writeExportScenario } from './export-fixtures.ts';
import { eventFixture, runFixture } from '../store/store-fixtures.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';

const now = () => '2025-01-02T00:00:00.000Z';

describe('exportSession', () => {
  let store: Store;

  beforeEach(async () => {
    store = createSqliteStore({ path: ':memory:' });
    await writeExportScenario(store);
  });

  afterEach(async () => {
    await store.close();
  });

  it('writes the contract document: format, version, session and conversation', async () => {
    const document = await exportSession(store, 'ses_1', { now });
    expect(Object.keys(document)).toEqual(['format', 'version', 'exported_at', 'session', 'messages', 'runs', 'usage', 'agent_usage']);
    expect(document.format).toBe('cadre.session-export');
    expect(document.version).toBe(1);
    expect(document.exported_at).toBe('2025-01-02T00:00:00.000Z');
    expect(document.session).toEqual({
      id: 'ses_1',
      agent: 'main',
      model: 'scripted:test',
      created_at: '2025-01-01T00:00:00.000Z',
      status: 'idle',
    });
    expect(document.messages.map((message) => [message.seq, message.role])).toEqual([
      [1, 'user'],
      [2, 'assistant'],
      [3, 'tool'],
      [4, 'assistant'],
    ]);
    expect(document.messages[0]).toEqual({ seq: 1, role: 'user', content: 'Survey the two modules.', created_at: '2025-01-01T00:00:01.000Z' });
  });

  it("gives a child session's export the subagent's own usage, resumed runs included, not 0", async () => {
    await store.createSession({
      id: 'ses_child_1',
      agent: 'researcher',
      model: 'scripted:test',
      created_at: '2025-01-01T00:00:03.000Z',
      status: 'idle',
      parent_run_id: 'run_1',
      auto_resumes: 0,
      user_canceled_at: null,
    });
    await store.insertRun(
      runFixture({
        id: 'run_4',
        child_session_id: 'ses_child_1',
        resumed_from: 'run_1',
        created_at: '2025-01-01T00:00:20.000Z',
        status: 'completed',
        usage: { input_tokens: 5, output_tokens: 1 },
      }),
      eventFixture('run_4', 'run-queued', {}, '2025-01-01T00:00:20.000Z'),
    );
    const child = await exportSession(store, 'ses_child_1', { now });
    expect(child.agent_usage).toEqual({ input_tokens: 105, output_tokens: 21 });
    expect(child.usage).toEqual({ input_tokens: 10, output_tokens: 5 });
    expect(child.runs.map((run) => run.id)).toEqual(['run_2']);
    expect(renderMarkdownExport(child)).toContain('105 input tokens, 21 output tokens');
  });

  it("nests the runs a subagent started under its run, oldest first, and leaves other sessions' runs out", async () => {
    const document = await exportSession(store, 'ses_1', { now });
    expect(document.runs.map((run) => run.id)).toEqual(['run_1', 'run_3']);
    expect(document.runs[0].runs.map((run) => run.id)).toEqual(['run_2']);
    expect(document.runs[0].runs[0].runs).toEqual([]);
    expect(document.runs[0].events.map((event) => [event.seq, event.type])).toEqual([
      [1, 'run-queued'],
      [2, 'run-start'],
      [3, 'tool-call-start'],
      [4, 'tool-call-end'],
      [5, 'run-end'],
    ]);
    expect(document.runs[0].events[2]).toEqual({
      seq: 3,
      at: '2025-01-01T00:00:04.500Z',
      type: 'tool-call-start',
      data: { tool: 'read_file', label: 'src/a.ts' },
    });
  });

  it('gives each run every contract field and none of the lease or stop bookkeeping', async () => {
    const [, canceled] = (await exportSession(store, 'ses_1', { now })).runs;
    expect(Object.keys(canceled)).toEqual([
      'id',
      'parent_session_id',
      'child_session_id',
      'parent_run_id',
      'tool_call_id',
      'agent',
      'description',
      'task',
      'context',
      'mode',
      'status',
      'depth',
      'max_turns',
      'turns',
      'created_at',
      'started_at',
      'ended_at',
      'promoted_at',
      'consumed_at',
      'last_activity',
      'activity',
      'result',
      'partial_result',
      'error',
      'usage',
      'warnings',
      'notification',
      'resumed_from',
      'events',
      'runs',
    ]);
    expect(canceled.partial_result).toBe('Half way through');
    expect(JSON.stringify(canceled)).not.toMatch(/process_1|Taking too long/);
  });

  it('keeps the typed activity beside its text', async () => {
    const [completed] = (await exportSession(store, 'ses_1', { now })).runs;
    expect(completed.last_activity).toBe('completed: Module a reads files.');
    expect(completed.activity).toEqual({ kind: 'finished', status: 'completed', detail: 'Module a reads files.' });
  });

  it('exports a session stored before activity was typed as version 1, its lines as text', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'cadre-export-'));
    const path = join(folder, 'cadre.db');
    const file = createSqliteStore({ path });
    await writeExportScenario(file);
    await file.close();
    // What a build before typed activity stored: the line itself.
    const database = new DatabaseSync(path);
    database.prepare('UPDATE runs SET last_activity = ? WHERE id = ?').run('awaiting approval: bash npm test', 'run_3');
    database.close();
    const reopened = createSqliteStore({ path });
    try {
      const document = await exportSession(reopened, 'ses_1', { now });
      expect(document.version).toBe(1);
      const [, older] = document.runs;
      expect(older.last_activity).toBe('awaiting approval: bash npm test');
      expect(older.activity).toEqual({ kind: 'text', text: 'awaiting approval: bash npm test' });
      expect(renderMarkdownExport(document)).toContain('Last activity: awaiting approval: bash npm test');
    } finally {
      await reopened.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('sums the usage of every run, nested ones included', async () => {
    const document = await exportSession(store, 'ses_1', { now });
    expect(document.usage).toEqual({ input_tokens: 110, output_tokens: 25 });
  });

  it("carries the primary agent's own tokens, and the token budgets when the exporter has any", async () => {
    await store.addSessionUsage('ses_1', { input_tokens: 500, output_tokens: 60 });
    const plain = await exportSession(store, 'ses_1', { now });
    expect(plain.agent_usage).toEqual({ input_tokens: 500, output_tokens: 60 });
    expect(plain).not.toHaveProperty('token_budgets');
    const budgeted = await exportSession(store, 'ses_1', { now, limits: { maxTokensPerSession: 10_000 } });
    expect(budgeted.token_budgets).toEqual({ max_tokens_per_run: null, max_tokens_per_session: 10_000 });
    const markdown = renderMarkdownExport(budgeted);
    expect(markdown).toContain('- Primary agent usage: 500 input tokens, 60 output tokens\n- Token budgets: per run none; per session 10,000 tokens');
  });

  it('replaces anything that looks like a credential', async () => {
    const json = JSON.stringify(await exportSession(store, 'ses_1', { now }));
    expect(json).not.toContain(fakeApiKey);
    expect(json).toContain('OPENAI_API_KEY=[REDACTED]');
  });

  it('exports the runs of a child session, and throws ConfigError for an unknown session', async () => {
    await store.createSession({
      id: 'ses_child_1',
      agent: 'researcher',
      model: 'scripted:test',
      created_at: '2025-01-01T00:00:03.000Z',
      status: 'idle',
      parent_run_id: 'run_1',
      auto_resumes: 0,
      user_canceled_at: null,
    });
    expect((await exportSession(store, 'ses_child_1', { now })).runs.map((run) => run.id)).toEqual(['run_2']);
    const missing = exportSession(store, 'ses_missing', { now });
    await expect(missing).rejects.toThrow(ConfigError);
    await expect(missing).rejects.toThrow("No session 'ses_missing'.");
  });
});

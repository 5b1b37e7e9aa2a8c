import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportSession } from './export-session.ts';
import { fakeApiKey, writeExportScenario } from './export-fixtures.ts';
import { renderMarkdownExport } from './render-markdown-export.ts';
import type { SessionExport } from './session-export.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';

const now = () => '2025-01-02T00:00:00.000Z';

describe('renderMarkdownExport', () => {
  let store: Store;

  beforeEach(() => {
    store = createSqliteStore({ path: ':memory:' });
  });

  afterEach(async () => {
    await store.close();
  });

  async function render(resultText?: string): Promise<string> {
    await writeExportScenario(store, { resultText });
    return renderMarkdownExport(await exportSession(store, 'ses_1', { now }));
  }

  it('starts with the session: id, agent, model, status and creation time', async () => {
    const markdown = await render();
    expect(markdown.startsWith('# Session ses_1\n')).toBe(true);
    for (const line of ['- Agent: main', '- Model: scripted:test', '- Status: idle', '- Created: 2025-01-01T00:00:00.000Z']) {
      expect(markdown).toContain(line);
    }
    expect(markdown).toContain('- Subagent usage: 110 input tokens, 25 output tokens');
  });

  it('shows the conversation with role headings, text in fences, tool calls and tool results', async () => {
    const markdown = await render();
    expect(markdown).toContain('### 1. user · 2025-01-01T00:00:01.000Z\n\n```text\nSurvey the two modules.\n```');
    expect(markdown).toContain('→ `agent({"agent":"researcher","task":"Read src/a.ts"})`');
    expect(markdown).toContain('← `agent`\n\n```text\nrun_id: run_1\nstatus: completed');
    // A text holding a fence gets a longer fence, so it cannot close the block early.
    expect(markdown).toContain('````text\nModule a reads ```files```.\n````');
  });

  it('renders each run with its facts and timeline, nested runs one heading deeper', async () => {
    const markdown = await render();
    expect(markdown).toContain('### Run run_1 · researcher · completed');
    expect(markdown).toContain('#### Run run_2 · general · failed');
    expect(markdown.indexOf('#### Run run_2')).toBeLessThan(markdown.indexOf('### Run run_3'));
    expect(markdown).toContain('- Mode: background');
    expect(markdown).toContain('elapsed 4.0s');
    expect(markdown).toContain('- Turns: 2 of 20');
    expect(markdown).toContain('- Warnings: long_running at 2025-01-01T00:00:06.000Z');
    expect(markdown).toContain('- Notification: delivered at 2025-01-01T00:00:09.000Z');
    expect(markdown).toContain('- Error: max_turns: Used all 20 turns without a final answer.');
    expect(markdown).toContain(
      ['- +1.2s run-start', '- +1.5s tool-call-start read_file src/a.ts', '- +2.0s tool-call-end read_file ok', '- +5.0s run-end completed'].join('\n'),
    );
    expect(markdown).toContain('**Partial result** (the last text before the run ended)\n\n```text\nHalf way through\n```');
  });

  it('shows asks for approval and their answers in the timeline', async () => {
    await writeExportScenario(store, {});
    await store.appendRunEvents([
      { run_id: 'run_3', at: '2025-01-01T00:00:10.000Z', type: 'approval-request', data: { approval_id: 'apr_1', tool: 'bash', summary: 'bash npm test' } },
      { run_id: 'run_3', at: '2025-01-01T00:00:11.000Z', type: 'approval-resolve', data: { approval_id: 'apr_1', decision: 'approved', by: 'person' } },
    ]);
    const exported = await exportSession(store, 'ses_1', { now });
    const events = exported.runs.find((run) => run.id === 'run_3')!.events.map((event) => event.type);
    expect(events.slice(-2)).toEqual(['approval-request', 'approval-resolve']);
    const markdown = renderMarkdownExport(exported);
    expect(markdown).toMatch(/- \+[\d.]+s approval-request bash npm test \(apr_1\)/);
    expect(markdown).toMatch(/- \+[\d.]+s approval-resolve approved by person \(apr_1\)/);
  });

  it('keeps the head and tail of a long result and says how much was left out', async () => {
    const markdown = await render(`${'a'.repeat(3000)}${'z'.repeat(1000)}`);
    expect(markdown).toContain('**Result** (4,000 characters)');
    expect(markdown).toContain(`${'a'.repeat(1300)}\n[... 2000 characters omitted ...]\n${'z'.repeat(700)}\n\`\`\``);
    expect(markdown).not.toContain('a'.repeat(1301));
  });

  it('never shows anything that looks like a secret, even in a document built elsewhere', async () => {
    const markdown = await render();
    expect(markdown).not.toContain(fakeApiKey);
    const document = await exportSession(store, 'ses_1', { now });
    const tampered: SessionExport = { ...document, messages: [{ seq: 1, role: 'user', content: `key ${fakeApiKey}`, created_at: now() }] };
    expect(renderMarkdownExport(tampered)).not.toContain(fakeApiKey);
  });

  it('escapes inline text that would otherwise become markup', async () => {
    await writeExportScenario(store);
    const document = await exportSession(store, 'ses_1', { now });
    document.runs[0].description = 'Fix <script>alert(1)</script> and [a link](http://x) *now*\n# heading';
    const markdown = renderMarkdownExport(document);
    expect(markdown).toContain('- Description: Fix \\<script\\>alert(1)\\</script\\> and \\[a link\\](http://x) \\*now\\* # heading');
  });

  it('says so when a session has no messages and no runs', () => {
    const markdown = renderMarkdownExport({
      format: 'cadre.session-export',
      version: 1,
      exported_at: now(),
      session: { id: 'ses_empty', agent: 'main', model: 'm', created_at: now(), status: 'idle' },
      messages: [],
      runs: [],
      usage: { input_tokens: 0, output_tokens: 0 },
      agent_usage: { input_tokens: 0, output_tokens: 0 },
    });
    expect(markdown).toContain('_(no messages)_');
    expect(markdown).toContain('_(no subagent runs)_');
  });

  it('lists the messages sent to a run, where each arrived, and keeps them in the JSON export', async () => {
    await writeExportScenario(store);
    const sent = { from: 'person' as const, interrupt: true, sent_at: '2025-01-01T00:00:05.000Z' };
    await store.updateRun('run_1', {
      messages: [
        { ...sent, id: 'msg_1', text: 'Skip the tests.', delivered_at: '2025-01-01T00:00:06.000Z', delivered_to: 'transcript' },
        { ...sent, id: 'msg_2', from: 'parent', interrupt: false, text: 'Then report.', delivered_at: null, delivered_to: null },
      ],
    });
    const exported = await exportSession(store, 'ses_1', { now });
    expect(exported.runs.find((run) => run.id === 'run_1')?.messages?.map((message) => message.id)).toEqual(['msg_1', 'msg_2']);
    const markdown = renderMarkdownExport(exported);
    expect(markdown).toContain(
      '**Messages sent to it**\n\n- From a person (interrupting) at 2025-01-01T00:00:05.000Z, delivered at 2025-01-01T00:00:06.000Z: Skip the tests.\n- From the parent at 2025-01-01T00:00:05.000Z, pending: Then report.',
    );
  });
});

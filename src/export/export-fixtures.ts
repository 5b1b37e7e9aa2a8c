import type { Store } from '../store/store.ts';
import { eventFixture, runFixture, sessionFixture } from '../store/store-fixtures.ts';

/** A key-shaped string the exports must never contain. */
export const fakeApiKey = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';

const at = (second: number) => `2025-01-01T00:00:${String(second).padStart(2, '0')}.000Z`;

/**
 * A session for export tests: a conversation with a tool call and result, a completed run
 * that started a failed nested run, a canceled run with lease and stop bookkeeping, and a run
 * of another session. Not part of the public entry point.
 */
export async function writeExportScenario(store: Store, options: { resultText?: string } = {}): Promise<void> {
  await store.createSession(sessionFixture({ id: 'ses_1', status: 'idle' }));
  await store.createSession(sessionFixture({ id: 'ses_other' }));
  await store.appendMessages([
    { session_id: 'ses_1', role: 'user', content: 'Survey the two modules.', created_at: at(1) },
    {
      session_id: 'ses_1',
      role: 'assistant',
      content: [
        { type: 'text', text: 'I will ask a researcher.' },
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'agent', input: { agent: 'researcher', task: 'Read src/a.ts' } },
      ],
      created_at: at(2),
    },
    {
      session_id: 'ses_1',
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_1',
          toolName: 'agent',
          output: { type: 'text', value: `run_id: run_1\nstatus: completed\n\nFound OPENAI_API_KEY=${fakeApiKey} in .env` },
        },
      ],
      created_at: at(9),
    },
    { session_id: 'ses_1', role: 'assistant', content: [{ type: 'text', text: 'Module a reads ```files```.' }], created_at: at(10) },
  ]);

  const resultText = options.resultText ?? 'Module a reads files.';
  await store.insertRun(
    runFixture({
      id: 'run_1',
      child_session_id: 'ses_child_1',
      created_at: at(3),
      started_at: at(4),
      ended_at: at(8),
      status: 'completed',
      mode: 'background',
      turns: 2,
      result: { text: resultText, truncated: resultText.length > 8000, original_length: resultText.length },
      usage: { input_tokens: 100, output_tokens: 20 },
      warnings: [{ kind: 'long_running', at: at(6) }],
      notification: { delivered_at: at(9), suppressed: false },
      activity: { kind: 'finished', status: 'completed', detail: 'Module a reads files.' },
    }),
    eventFixture('run_1', 'run-queued', { mode: 'background' }, at(3)),
  );
  await store.appendRunEvents([
    eventFixture('run_1', 'run-start', {}, '2025-01-01T00:00:04.200Z'),
    eventFixture('run_1', 'tool-call-start', { tool: 'read_file', label: 'src/a.ts' }, '2025-01-01T00:00:04.500Z'),
    eventFixture('run_1', 'tool-call-end', { tool: 'read_file', ok: true }, at(5)),
    eventFixture('run_1', 'run-end', { status: 'completed' }, at(8)),
  ]);
  await store.insertRun(
    runFixture({
      id: 'run_2',
      parent_session_id: 'ses_child_1',
      child_session_id: 'ses_child_2',
      parent_run_id: 'run_1',
      agent: 'general',
      depth: 2,
      created_at: at(5),
      status: 'failed',
      error: { kind: 'max_turns', message: 'Used all 20 turns without a final answer.' },
      usage: { input_tokens: 10, output_tokens: 5 },
    }),
    eventFixture('run_2', 'run-queued', {}, at(5)),
  );
  await store.insertRun(
    runFixture({
      id: 'run_3',
      created_at: at(11),
      status: 'canceled_by_user',
      partial_result: 'Half way through',
      lease_owner: 'process_1',
      lease_expires_at: at(40),
      stop_requested_at: at(12),
      stop_requested_by: 'user',
      stop_reason: 'Taking too long',
    }),
    eventFixture('run_3', 'run-queued', {}, at(11)),
  );
  await store.insertRun(runFixture({ id: 'run_other', parent_session_id: 'ses_other' }), eventFixture('run_other', 'run-queued'));
}

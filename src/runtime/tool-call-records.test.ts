import { tool, type ToolSet } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answerOrphanedCalls } from '../executors/answer-orphaned-calls.ts';
import type { MessageRecord } from '../store/records.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type Script } from '../testing/index.ts';
import { createCadre, type Cadre } from './create-cadre.ts';
import { eventually } from '../../test/helpers/eventually.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

function makeCadre(script: Script, streaming: 'always' | 'never' = 'always', tools?: ToolSet) {
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    model: scriptedLanguageModel(script),
    maxRetries: 0,
    streaming,
    tools,
    permissions: { allow: ['read_file'] },
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return cadre;
}

type Part = { type: string; toolCallId?: string; providerOptions?: unknown; output?: { value: string } };
const partsOf = (messages: readonly MessageRecord[]) => messages.flatMap((message) => (Array.isArray(message.content) ? (message.content as Part[]) : []));

/** Each call has exactly one result, in the message right after its own. */
function expectEveryCallAnswered(messages: readonly MessageRecord[]): void {
  messages.forEach((message, index) => {
    const calls = partsOf([message])
      .filter((part) => part.type === 'tool-call')
      .map((part) => part.toolCallId);
    if (calls.length === 0) return;
    const results = partsOf([messages[index + 1]].filter(Boolean))
      .filter((part) => part.type === 'tool-result')
      .map((part) => part.toolCallId);
    expect(results.sort()).toEqual(calls.sort());
  });
  const all = partsOf(messages)
    .filter((part) => part.type === 'tool-result')
    .map((part) => part.toolCallId);
  expect(new Set(all).size).toBe(all.length);
}

const twoCalls: Script = [
  { when: { system_includes: 'general-purpose' }, turns: [{ text: 'never', delay_ms: 60_000 }] },
  {
    turns: [
      {
        text: 'Reading and delegating.',
        tool_calls: [
          { name: 'read_file', arguments: { path: 'package.json' } },
          { name: 'agent', arguments: { agent: 'general', task: 'Slow job', description: 'slow job' } },
        ],
      },
      { text: 'done' },
    ],
  },
];

describe('tool calls stored before they run', () => {
  for (const streaming of ['always', 'never'] as const) {
    it(`stores the step's calls while the step waits on a foreground run, then one assistant message with every call once (${streaming === 'always' ? 'streamed' : 'not streamed'})`, async () => {
      let readDone!: () => void;
      const read = new Promise<void>((resolve) => (readDone = resolve));
      const readFile = tool({
        inputSchema: z.object({ path: z.string() }),
        execute: async ({ path }) => {
          setImmediate(readDone);
          return `contents of ${path}`;
        },
      });
      const cadre = makeCadre(twoCalls, streaming, { read_file: readFile });
      const session = await cadre.createSession();
      const turn = cadre.send(session.id, 'go');
      const run = await eventually(async () => (await cadre.store.listRuns({ parent_session_id: session.id }))[0], { interval: 5, what: 'the run' });
      await read;
      const during = await cadre.store.listMessages(session.id);
      expect(during.map((message) => message.role)).toEqual(['user', 'assistant']);
      const stored = partsOf(during.slice(1));
      expect(stored.map((part) => part.type)).toEqual(['tool-call', 'tool-call']);
      expect(stored.map((part) => part.toolCallId)).toContain(run.tool_call_id);
      // Marked as under way by this process.
      expect(JSON.stringify(stored)).toContain(cadre.ownerId);

      await cadre.stopSession(session.id);
      await turn;
      const after = await cadre.store.listMessages(session.id);
      expect(after.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
      expectEveryCallAnswered(after);
      expect(JSON.stringify(after)).not.toContain('pending_owner');
      const results = partsOf(after).filter((part) => part.type === 'tool-result');
      // The read finished: its real output. The delegation tells of the run it started: unstreamed, the
      // step ends with the stopped run's result; streamed, the loop ends at once, before the call.
      expect(results[0].output?.value).toBe('contents of package.json');
      if (streaming === 'always') {
        expect(results[1].output?.value).toMatch(
          new RegExp(`^The turn ended \\(stopped or failed\\) before this call finished\\. Runs it started: ${run.id} \\(general\\)`),
        );
      } else {
        expect(results[1].output?.value).toContain(`run_id: ${run.id}`);
      }
    });
  }

  it('rewrites the stored calls as the whole step message at its end: text and each call once', async () => {
    const cadre = makeCadre([
      { when: { system_includes: 'general-purpose' }, turns: [{ text: 'quick' }] },
      {
        turns: [
          {
            text: 'Reading twice.',
            tool_calls: [
              { name: 'read_file', arguments: { path: 'package.json' } },
              { name: 'list_files', arguments: {} },
            ],
          },
          { text: 'done' },
        ],
      },
    ]);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const messages = await cadre.store.listMessages(session.id);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(partsOf([messages[1]]).map((part) => part.type)).toEqual(['text', 'tool-call', 'tool-call']);
    expectEveryCallAnswered(messages);
    expect(JSON.stringify(messages)).not.toContain('pending_owner');
  });

  it('answers the calls of a dead process once, after the calls, and leaves a live process alone', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const session = {
      id: 'ses_1',
      agent: 'main',
      model: 'm',
      created_at: '2026-01-01T00:00:00.000Z',
      status: 'running' as const,
      parent_run_id: null,
      auto_resumes: 0,
      user_canceled_at: null,
    };
    await store.createSession(session);
    await store.createSession({ ...session, id: 'ses_2' });
    const call = (id: string, owner: string) => ({
      type: 'tool-call',
      toolCallId: id,
      toolName: 'bash',
      input: { command: 'make' },
      providerOptions: { cadre: { pending_owner: owner } },
    });
    const at = '2026-01-01T00:00:01.000Z';
    // A pid no process has on this host, and this process itself.
    await store.appendMessages([
      { session_id: 'ses_1', role: 'user', content: 'go', created_at: at },
      { session_id: 'ses_1', role: 'assistant', content: [call('c1', `${(await import('node:os')).hostname()}:2147483646:x`)], created_at: at },
      { session_id: 'ses_2', role: 'user', content: 'go', created_at: at },
      { session_id: 'ses_2', role: 'assistant', content: [call('c2', `${(await import('node:os')).hostname()}:${process.pid}:x`)], created_at: at },
    ]);
    const now = () => '2026-01-01T00:00:02.000Z';
    expect(await answerOrphanedCalls({ store, sessionId: 'ses_1', now })).toBe(true);
    expect(await answerOrphanedCalls({ store, sessionId: 'ses_1', now })).toBe(false);
    const dead = await store.listMessages('ses_1');
    expectEveryCallAnswered(dead);
    expect(partsOf(dead).at(-1)?.output?.value).toBe(
      'The process stopped before this call finished, so its result was lost. The call may have run, partly or fully: check its effects before you repeat it.',
    );
    expect(JSON.stringify(dead)).not.toContain('pending_owner');
    expect(await answerOrphanedCalls({ store, sessionId: 'ses_2', now })).toBe(false);
    expect(await store.listMessages('ses_2')).toHaveLength(2);
    await store.close();
  });
});

import { describe, expect, it } from 'vitest';
import type { NewMessage, RunResult } from './records.ts';
import type { StoreCaseContext } from './store.case.ts';
import { eventFixture, runFixture, sessionFixture } from './store-fixtures.ts';

/** A subagent's answer: long enough to be stored once, with what JSON escapes and a surrogate pair. */
export const longAnswer = `The module reads "files" line by line.\n\tIt keeps a cache 🚀 and a \\ path.\n${'Every line is parsed once. '.repeat(60)}`;

/** What the agent tool gives the parent for a finished run: header lines, a blank line, the text. */
function toolOutput(runId: string, text: string): string {
  return `run_id: ${runId}\nagent: researcher\nstatus: completed\n\n${text}`;
}

function toolResultMessage(sessionId: string, callId: string, value: string): NewMessage {
  return {
    session_id: sessionId,
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: callId, toolName: 'agent', output: { type: 'text', value } }],
    created_at: '2025-01-01T00:00:09.000Z',
  };
}

/**
 * A finished run's answer stored once (see `store/core/result-refs.ts`): the messages that repeat
 * it read back exactly as they were written, on every engine, before and after reopening.
 */
export function answerCases({ store, reopen, storedContent }: StoreCaseContext): void {
  describe("a subagent's answer", () => {
    /** Runs `run_1` to its end with `result`, its own session's last message being `answer` when given. */
    async function finishRun(result: RunResult, answer: string | null = result.text): Promise<NewMessage[]> {
      await store().createSession(sessionFixture({ id: 'ses_1' }));
      await store().createSession(sessionFixture({ id: 'ses_child_run_1', parent_run_id: 'run_1' }));
      await store().insertRun(runFixture({ id: 'run_1' }), eventFixture('run_1', 'run-queued'));
      await store().transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
      const child: NewMessage[] = [
        { session_id: 'ses_child_run_1', role: 'user', content: 'Find the facts about the store.', created_at: '2025-01-01T00:00:03.000Z' },
      ];
      if (answer !== null) {
        child.push({
          session_id: 'ses_child_run_1',
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Looking.' },
            { type: 'text', text: answer, providerOptions: { scripted: { id: 1 } } },
          ],
          created_at: '2025-01-01T00:00:04.000Z',
        });
      }
      // The last message and the result in one go, as a run's last step and its end are written.
      const appended = store().appendMessages(child);
      const ended = store().transitionRun({
        id: 'run_1',
        from: ['running'],
        to: 'completed',
        patch: { result, ended_at: '2025-01-01T00:00:05.000Z' },
        event: eventFixture('run_1', 'run-end', { status: 'completed' }),
      });
      await appended;
      expect((await ended)?.result).toEqual(result);
      return child;
    }

    async function expectMessages(sessionId: string, written: readonly NewMessage[]): Promise<void> {
      const listed = await store().listMessages(sessionId);
      expect(listed.map(({ role, content, created_at }) => ({ session_id: sessionId, role, content, created_at }))).toEqual(written);
    }

    it('reads back whole in the parent tool result, a notification and the run’s last message, before and after reopening', async () => {
      const result: RunResult = { text: longAnswer, truncated: false, original_length: longAnswer.length };
      const child = await finishRun(result);
      const parent: NewMessage[] = [
        toolResultMessage('ses_1', 'call_1', toolOutput('run_1', longAnswer)),
        {
          session_id: 'ses_1',
          role: 'user',
          content: `<notification>\nrun_1 finished:\n\n${longAnswer}\n</notification>\n\nAnd again: ${longAnswer}`,
          created_at: '2025-01-01T00:00:10.000Z',
        },
      ];
      const stored = await store().appendMessages(parent);
      // The records handed back are the content as given.
      expect(stored.map((message) => message.content)).toEqual(parent.map((message) => message.content));
      const check = async () => {
        await expectMessages('ses_child_run_1', child);
        await expectMessages('ses_1', parent);
        expect(await store().listMessages('ses_1', { afterSeq: 1 })).toEqual([{ ...parent[1], seq: 2 }]);
        expect((await store().getRun('run_1'))?.result).toEqual(result);
      };
      await check();
      if (storedContent) {
        // Stored once: the parent's messages name the run instead of repeating its text.
        await store().flush();
        for (const seq of [1, 2]) {
          const raw = await storedContent('ses_1', seq);
          expect(raw).toContain('"cadre_result_of":["run_1"]');
          expect(raw).not.toContain('Every line is parsed once.');
        }
      }
      if (reopen) {
        await reopen();
        await check();
      }
    });

    it('keeps a result cut or summarized for the parent as the parent saw it', async () => {
      const cut = `${longAnswer.slice(0, 100)}\n\n[... 900 characters omitted ...]\n\n${longAnswer.slice(-100)}`;
      const summary = `A summary of the module that is long enough to be stored once if it were a result text, but is not.`;
      await finishRun({ text: longAnswer, truncated: true, original_length: longAnswer.length, summarized: true, summary });
      const parent = [toolResultMessage('ses_1', 'call_1', toolOutput('run_1', cut)), toolResultMessage('ses_1', 'call_1', toolOutput('run_1', summary))];
      await store().appendMessages(parent);
      await expectMessages('ses_1', parent);
      if (storedContent) for (const seq of [1, 2]) expect(await storedContent('ses_1', seq)).not.toContain('cadre_result_of');
    });

    it('stores as given a message that holds the reference marker (\\u0001) or a NUL of its own, and a rewritten one', async () => {
      const result: RunResult = { text: longAnswer, truncated: false, original_length: longAnswer.length };
      await finishRun(result);
      const withNul = toolResultMessage('ses_1', 'call_1', `${toolOutput('run_1', longAnswer)}\u0001 and \u0000 trailing`);
      const [stored] = await store().appendMessages([withNul, toolResultMessage('ses_1', 'call_1', 'pending')]);
      await store().updateMessageContent('ses_1', stored.seq + 1, withNul.content);
      await expectMessages('ses_1', [withNul, withNul]);
    });

    it('reads back a run’s answer that only its own session holds, and messages of another call of the parent', async () => {
      const other = `${longAnswer} (of another run)`;
      await finishRun({ text: longAnswer, truncated: false, original_length: longAnswer.length });
      // Not the run's tool call: an answer that happens to hold the text is kept as written.
      const parent = [toolResultMessage('ses_1', 'call_9', toolOutput('run_9', other))];
      await store().appendMessages(parent);
      await expectMessages('ses_1', parent);
    });
  });
}

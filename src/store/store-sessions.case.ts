import { describe, expect, it } from 'vitest';
import type { StoreCaseContext } from './store.case.ts';
import { sessionFixture } from './store-fixtures.ts';

/** Sessions and messages. */
export function sessionCases({ store }: StoreCaseContext): void {
  describe('sessions', () => {
    it('returns a created session as it was stored, and null for an unknown id', async () => {
      const session = sessionFixture({ parent_run_id: 'run_9', user_canceled_at: '2025-01-01T00:00:05.000Z', auto_resumes: 2 });
      await store().createSession(session);
      expect(await store().getSession('ses_1')).toEqual(session);
      expect(await store().getSession('ses_missing')).toBeNull();
    });

    it('lists sessions newest first, with a limit and only primary sessions on request', async () => {
      await store().createSession(sessionFixture({ id: 'ses_a', created_at: '2025-01-01T00:00:01.000Z' }));
      await store().createSession(sessionFixture({ id: 'ses_c', created_at: '2025-01-01T00:00:03.000Z', parent_run_id: 'run_1' }));
      await store().createSession(sessionFixture({ id: 'ses_b', created_at: '2025-01-01T00:00:02.000Z' }));
      const ids = async (options?: Parameters<ReturnType<typeof store>['listSessions']>[0]) =>
        (await store().listSessions(options)).map((session) => session.id);
      expect(await ids()).toEqual(['ses_c', 'ses_b', 'ses_a']);
      expect(await ids({ limit: 2 })).toEqual(['ses_c', 'ses_b']);
      expect(await ids({ primaryOnly: true })).toEqual(['ses_b', 'ses_a']);
    });

    it('updates the given fields of a session and leaves the others', async () => {
      await store().createSession(sessionFixture());
      await store().updateSession('ses_1', { status: 'running', auto_resumes: 3 });
      expect(await store().getSession('ses_1')).toEqual(sessionFixture({ status: 'running', auto_resumes: 3 }));
      await store().updateSession('ses_1', { user_canceled_at: '2025-01-02T00:00:00.000Z' });
      expect((await store().getSession('ses_1'))?.user_canceled_at).toBe('2025-01-02T00:00:00.000Z');
    });
  });

  describe('session usage', () => {
    it("adds a session's own tokens up, starting at zero, and knows no usage of an unknown session", async () => {
      await store().createSession(sessionFixture());
      expect(await store().getSessionUsage('ses_1')).toEqual({ input_tokens: 0, output_tokens: 0 });
      await Promise.all([
        store().addSessionUsage('ses_1', { input_tokens: 100, output_tokens: 20 }),
        store().addSessionUsage('ses_1', { input_tokens: 5, output_tokens: 1 }),
      ]);
      expect(await store().getSessionUsage('ses_1')).toEqual({ input_tokens: 105, output_tokens: 21 });
      // The record itself is unchanged by the usage columns.
      expect(await store().getSession('ses_1')).toEqual(sessionFixture());
      expect(await store().getSessionUsage('ses_missing')).toBeNull();
    });

    it('adds the prompt-cache tokens a provider reported, which are parts of the input tokens', async () => {
      await store().createSession(sessionFixture());
      await store().addSessionUsage('ses_1', { input_tokens: 100, output_tokens: 20, cache_write_tokens: 90 });
      await store().addSessionUsage('ses_1', { input_tokens: 110, output_tokens: 5, cache_read_tokens: 90 });
      await store().addSessionUsage('ses_1', { input_tokens: 1, output_tokens: 1 });
      expect(await store().getSessionUsage('ses_1')).toEqual({ input_tokens: 211, output_tokens: 26, cache_read_tokens: 90, cache_write_tokens: 90 });
    });
  });

  describe('messages', () => {
    const at = '2025-01-01T00:00:03.000Z';

    it('gives appended messages consecutive seq per session, in order, starting at 1', async () => {
      const first = await store().appendMessages([
        { session_id: 'ses_1', role: 'user', content: 'Hello', created_at: at },
        { session_id: 'ses_2', role: 'user', content: 'Other', created_at: at },
        { session_id: 'ses_1', role: 'assistant', content: [{ type: 'text', text: 'Hi' }], created_at: at },
      ]);
      expect(first.map((message) => [message.session_id, message.seq])).toEqual([
        ['ses_1', 1],
        ['ses_2', 1],
        ['ses_1', 2],
      ]);
      const second = await store().appendMessages([{ session_id: 'ses_1', role: 'user', content: 'Again', created_at: at }]);
      expect(second[0].seq).toBe(3);
    });

    it('keeps the order of concurrent appends and round-trips content', async () => {
      const content = [
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'read_file', input: { path: 'src/a.ts' } },
        { type: 'text', text: 'quote " and unicode ✓' },
      ];
      const appends = Array.from({ length: 50 }, (_, index) =>
        store().appendMessages([{ session_id: 'ses_1', role: 'assistant', content: index === 7 ? content : `m${index}`, created_at: at }]),
      );
      const results = await Promise.all(appends);
      expect(results.map((result) => result[0].seq)).toEqual(Array.from({ length: 50 }, (_, index) => index + 1));
      const listed = await store().listMessages('ses_1');
      expect(listed.map((message) => message.content)).toEqual(Array.from({ length: 50 }, (_, index) => (index === 7 ? content : `m${index}`)));
      expect(listed[0]).toEqual({ session_id: 'ses_1', seq: 1, role: 'assistant', content: 'm0', created_at: at });
    });

    it('replaces the content of one stored message and keeps its seq', async () => {
      await store().appendMessages(['a', 'b'].map((text) => ({ session_id: 'ses_1', role: 'user' as const, content: text, created_at: at })));
      await store().updateMessageContent('ses_1', 1, [{ type: 'text', text: 'a, joined' }]);
      expect(await store().listMessages('ses_1')).toEqual([
        { session_id: 'ses_1', seq: 1, role: 'user', content: [{ type: 'text', text: 'a, joined' }], created_at: at },
        { session_id: 'ses_1', seq: 2, role: 'user', content: 'b', created_at: at },
      ]);
    });

    it('lists only messages after a seq, and none of an unknown session', async () => {
      await store().appendMessages(['a', 'b', 'c'].map((text) => ({ session_id: 'ses_1', role: 'user' as const, content: text, created_at: at })));
      expect((await store().listMessages('ses_1', { afterSeq: 1 })).map((message) => message.content)).toEqual(['b', 'c']);
      expect(await store().listMessages('ses_missing')).toEqual([]);
    });
  });
}

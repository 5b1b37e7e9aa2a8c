import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCadre } from '../runtime/create-cadre.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel } from '../testing/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { driveSession } from './drive-session.ts';

describe('driveSession', () => {
  it("reports a person's stop from another process (exit 130) even when the turn ends before the next poll", async () => {
    const store = createSqliteStore({ path: ':memory:' });
    let sessionId = '';
    // Stands in for `cadre stop SESSION_ID` in another process: it marks the session in the store while the turn works.
    const markStopped = defineTool({
      name: 'mark_stopped',
      description: 'Marks the session as stopped by a person',
      risk: 'read',
      inputSchema: z.object({}),
      execute: async () => {
        await store.updateSession(sessionId, { user_canceled_at: new Date(Date.now() + 1).toISOString() });
        return 'marked';
      },
    });
    const cadre = createCadre({
      store,
      model: scriptedLanguageModel([{ turns: [{ tool_calls: [{ name: 'mark_stopped', arguments: {} }] }, { text: 'Done.' }] }]),
      tools: { mark_stopped: markStopped },
      onError: () => {},
    });
    try {
      const session = await cadre.createSession();
      sessionId = session.id;
      const notices: string[] = [];
      const outcome = await driveSession({
        cadre,
        sessionId: session.id,
        prompt: 'Work.',
        view: { event: () => {}, notice: (text) => notices.push(text), finish: () => {} },
        signals: new EventEmitter() as unknown as NodeJS.Process,
        stopPollMs: 60_000,
        settleMs: 0,
      });
      expect(outcome.status).toBe('canceled');
    } finally {
      await cadre.close();
    }
  });
});

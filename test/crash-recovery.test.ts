import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { killAfterFirstLine } from './helpers/first-line.ts';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel } from '../src/testing/index.ts';
import { workerAgent, workerTools } from './fixtures/crash-worker.ts';

describe('crash survival', () => {
  it('resumes a run of a process killed with SIGKILL from its stored transcript and notifies the parent', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'cadre-crash-')), 'cadre.db');
    const { session_id: sessionId } = await killAfterFirstLine<{ session_id: string }>(join(import.meta.dirname, 'fixtures/crash-child.ts'), [path]);

    const store = createSqliteStore({ path });
    const [before] = await store.listRuns({ parent_session_id: sessionId });
    expect(before).toMatchObject({ status: 'running', turns: 1 });
    const eventsBefore = await store.listRunEvents(before.id);

    const cadre = createCadre({
      store,
      agents: [workerAgent],
      tools: workerTools,
      model: scriptedLanguageModel([
        { when: { system_includes: 'worker agent' }, turns: [{ text: 'unused' }, { text: 'Survey finished after the crash.' }] },
        { when: { last_user_includes: '<subagent-notification>' }, turns: [{ text: 'The survey is done.' }] },
      ]),
    });
    const report = await cadre.recover({ sessionId });
    expect(report).toEqual({ resumed: [before.id], abandoned: [], notified: [] });
    await cadre.waitForIdle(sessionId);

    const after = await store.getRun(before.id);
    expect(after).toMatchObject({ status: 'completed', turns: 2, mode: 'background' });
    expect(after?.result?.text).toBe('Survey finished after the crash.');
    expect(after?.notification?.delivered_at).toBeTypeOf('string');
    expect(after?.warnings.map((warning) => warning.kind)).toContain('recovered');
    const eventsAfter = await store.listRunEvents(before.id);
    // Nothing stored before the crash is lost, and the sequence goes on without gaps.
    expect(eventsAfter.slice(0, eventsBefore.length)).toEqual(eventsBefore);
    expect(eventsAfter.map((event) => event.seq)).toEqual(eventsAfter.map((_, index) => index + 1));
    const messages = await store.listMessages(sessionId);
    expect(JSON.stringify(messages.at(-1)?.content)).toContain('The survey is done.');
    await cadre.close();
    await store.close();
  });
});

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { killAfterFirstLine } from './helpers/first-line.ts';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';
import { scriptedLanguageModel } from '../src/testing/index.ts';
import { workerAgent, workerTools } from './fixtures/crash-worker.ts';

/** How many notification messages of the session announce each run. */
async function announcements(store: Store, sessionId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const message of await store.listMessages(sessionId)) {
    if (message.role !== 'user' || !String(message.content).startsWith('<subagent-notification>')) continue;
    for (const [, runId] of String(message.content).matchAll(/^run_id: (\S+)$/gm)) counts.set(runId, (counts.get(runId) ?? 0) + 1);
  }
  return counts;
}

function recoveringCadre(store: Store) {
  return createCadre({
    store,
    agents: [workerAgent],
    tools: workerTools,
    model: scriptedLanguageModel([
      { when: { system_includes: 'worker agent' }, turns: [{ text: 'unused' }, { text: 'Slow survey finished after the crash.' }] },
      { when: { last_user_includes: '<subagent-notification>' }, turns: [{ text: 'Noted.' }] },
      { turns: [{ text: 'Hello again.' }] },
    ]),
  });
}

describe('notifications across a crash', () => {
  it('delivers, exactly once, the notification of a background run that ended while its parent was mid-turn when the process was killed', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'cadre-notify-crash-')), 'cadre.db');
    const { session_id: sessionId } = await killAfterFirstLine<{ session_id: string }>(join(import.meta.dirname, 'fixtures/notification-crash-child.ts'), [
      path,
    ]);

    const store = createSqliteStore({ path });
    const quick = (await store.listRuns({ parent_session_id: sessionId })).find((run) => run.description === 'quick')!;
    // What the crash left: the run ended, its message never reached the transcript, and the
    // store knows the notification is owed.
    expect(quick).toMatchObject({ status: 'completed', mode: 'background', notification: { delivered_at: null, suppressed: false } });
    expect(await announcements(store, sessionId)).toEqual(new Map());

    const first = recoveringCadre(store);
    const report = await first.recover({ sessionId });
    expect(report.notified).toEqual([quick.id]);
    await first.waitForIdle(sessionId);
    await first.close();
    expect((await announcements(store, sessionId)).get(quick.id)).toBe(1);
    expect((await store.getRun(quick.id))?.notification?.delivered_at).toBeTypeOf('string');

    // A second recovery (another restart) announces nothing again.
    const second = recoveringCadre(store);
    expect((await second.recover({ sessionId })).notified).toEqual([]);
    await second.send(sessionId, 'Anything new?');
    await second.waitForIdle(sessionId);
    await second.close();
    const counts = await announcements(store, sessionId);
    expect(counts.get(quick.id)).toBe(1);
    // The slow run, resumed by the first recovery in the background, was announced once too.
    const slow = (await store.listRuns({ parent_session_id: sessionId })).find((run) => run.description === 'slow')!;
    expect(slow).toMatchObject({ status: 'completed', mode: 'background' });
    expect(counts.get(slow.id)).toBe(1);
    expect(await store.listRuns({ notification_pending: true })).toEqual([]);
    await store.close();
  });
});

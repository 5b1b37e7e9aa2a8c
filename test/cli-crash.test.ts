import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { startScriptedServer, type ScriptedServer, type ScriptedTurn } from '../src/testing/index.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';
import { eventually } from './helpers/eventually.ts';

let workspace: Workspace | undefined;
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  await workspace?.close();
});

describe('cadre run killed with SIGKILL', () => {
  it('leaves no run running forever: the next cadre run --session resumes it and the parent hears of it', async () => {
    workspace = await createWorkspace();
    let crashed = false;
    server = await startScriptedServer({
      script: (request): ScriptedTurn => {
        const last = request.messages.at(-1);
        if (request.system.includes('You are the scout')) {
          // Before the crash the scout's second turn hangs; after it, it answers.
          if (request.turn === 0) return { tool_calls: [{ name: 'list_files', arguments: { path: '.' } }] };
          return crashed ? { text: 'Scout report: notes.txt and src/app.ts.' } : { text: 'never', delay_ms: 120_000 };
        }
        if (last?.role === 'user' && last.content.includes('<subagent-notification>')) return { text: 'The scout reported: notes.txt and src/app.ts.' };
        if (last?.role === 'user' && last.content.includes('How is the scout doing')) return { text: 'Waiting for the scout.' };
        if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'scout', task: 'List the workspace', run_in_background: true } }] };
        return { text: 'The scout is working in the background.' };
      },
    });
    const flags = ['--model', 'openai-compatible:scripted', '--base-url', server.baseURL, '--db', workspace.database];
    const first = workspace.start(['run', ...flags, 'Start the scout']);
    const store = createSqliteStore({ path: workspace.database });
    const running = await eventually(async () => (await store.listRuns({ statuses: ['running'] })).find((run) => run.turns >= 1), {
      timeout: 10_000,
      interval: 50,
      what: 'a running run with a turn',
    });
    const runId = running.id;
    const sessionId = running.parent_session_id;
    first.child.kill('SIGKILL');
    const killed = await first.exited;
    expect(killed.signal).toBe('SIGKILL');
    expect((await store.getRun(runId))?.status).toBe('running');
    const eventsBefore = await store.listRunEvents(runId);
    crashed = true;

    const second = await workspace.run(['run', ...flags, '--session', sessionId, 'How is the scout doing?']);
    expect(second.code).toBe(0);
    const run = await store.getRun(runId);
    expect(run).toMatchObject({ status: 'completed', mode: 'background', turns: 2 });
    expect(run?.result?.text).toBe('Scout report: notes.txt and src/app.ts.');
    expect(run?.notification?.delivered_at).toBeTypeOf('string');
    expect(run?.warnings.map((warning) => warning.kind)).toContain('recovered');
    const eventsAfter = await store.listRunEvents(runId);
    expect(eventsAfter.slice(0, eventsBefore.length)).toEqual(eventsBefore);
    // The parent heard of it: the second process ends on its answer to the notification.
    expect(second.stdout).toContain('The scout reported: notes.txt and src/app.ts.');
    expect(await store.listRuns({ statuses: ['queued', 'running'] })).toHaveLength(0);
    await store.close();
  });
});

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { startWithFirstLine } from './helpers/first-line.ts';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel } from '../src/testing/index.ts';

const app = join(import.meta.dirname, 'fixtures/own-loop-app.ts');

/** Starts the app and resolves its first line of output (and the process). */
function startApp(args: string[]) {
  return startWithFirstLine<{ taken: ModelMessage[]; text?: string }>(app, args);
}

describe('notifications in an app’s own loop across a crash', () => {
  it('gives a notification taken by an app killed before it saved to the restarted app, which acknowledges it: once in its messages, never again', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'cadre-own-loop-crash-'));
    const databasePath = join(directory, 'cadre.db');
    const messagesPath = join(directory, 'messages.json');

    const first = startApp(['start', databasePath, messagesPath]);
    const { taken } = await first.line;
    expect(taken).toEqual([
      { role: 'user', content: expect.stringMatching(/^<subagent-notification>\nrun_id: run_\S+\nagent: general\nstatus: completed\ndescription: survey\n/) },
    ]);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const afterCrash = JSON.parse(readFileSync(messagesPath, 'utf8')) as ModelMessage[];
    expect(JSON.stringify(afterCrash)).not.toContain('<subagent-notification>');

    const second = startApp(['resume', databasePath, messagesPath]);
    const resumed = await second.line;
    await new Promise((resolve) => second.child.once('exit', resolve));
    expect(resumed.taken).toEqual(taken);
    expect(resumed.text).toBe('The background survey is done: three files.');
    const saved = JSON.parse(readFileSync(messagesPath, 'utf8')) as ModelMessage[];
    expect(saved.filter((message) => JSON.stringify(message).includes('<subagent-notification>'))).toHaveLength(1);

    // A third start of the app (here: this process) has nothing left to take.
    const store = createSqliteStore({ path: databasePath });
    const cadre = createCadre({ store, model: scriptedLanguageModel([{ turns: [{ text: 'unused' }] }]) });
    expect(await cadre.notifications('chat-crash').take()).toEqual([]);
    const runs = await store.listRuns({ parent_session_id: 'chat-crash' });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.notification?.delivered_at).toBeTypeOf('string');
    expect((await store.listMessages('chat-crash')).map((message) => message.content)).toEqual([taken[0]!.content]);
    await cadre.close();
  });

  it('recovers a run of an app killed mid-run: the restarted app resumes it and takes its notification', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'cadre-own-loop-crash-'));
    const databasePath = join(directory, 'cadre.db');
    const messagesPath = join(directory, 'messages.json');
    const first = startApp(['slow', databasePath, messagesPath]);
    await first.line;
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    const second = startApp(['recover', databasePath, messagesPath]);
    const { taken } = await second.line;
    await new Promise((resolve) => second.child.once('exit', resolve));
    expect(taken).toEqual([
      {
        role: 'user',
        content: expect.stringMatching(
          /^<subagent-notification>\nrun_id: run_\S+\nagent: general\nstatus: completed\ndescription: survey\nsummary: The survey found three files\./,
        ),
      },
    ]);
    const store = createSqliteStore({ path: databasePath });
    const [run] = await store.listRuns({ parent_session_id: 'chat-crash' });
    expect(run).toMatchObject({ status: 'completed', mode: 'background' });
    expect(run!.notification?.delivered_at).toBeTypeOf('string');
    await store.close();
  });
});

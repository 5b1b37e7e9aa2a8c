import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionRecord } from '../src/store/records.ts';
import type { SessionExport } from '../src/export/session-export.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace;
let sessionId: string;
beforeAll(async () => {
  workspace = await createWorkspace();
  const result = await workspace.run(['run', ...workspace.modelFlags, 'delegate please']);
  expect(result.code).toBe(0);
  sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
});
afterAll(() => workspace.close());

describe('cadre export', () => {
  it('writes the session as one JSON document with its runs and their events', async () => {
    const result = await workspace.run(['export', sessionId, '--db', workspace.database]);
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout) as SessionExport;
    expect(document).toMatchObject({ format: 'cadre.session-export', version: 1, session: { id: sessionId, agent: 'main', status: 'idle' } });
    expect(document.messages[0]).toMatchObject({ seq: 1, role: 'user', content: 'delegate please' });
    expect(document.runs).toHaveLength(1);
    expect(document.runs[0]).toMatchObject({ agent: 'scout', status: 'completed', runs: [] });
    const types = document.runs[0].events.map((event) => event.type);
    expect(types).toEqual(expect.arrayContaining(['run-queued', 'run-start', 'tool-call-start', 'tool-call-end', 'run-end']));
    expect(JSON.stringify(document)).not.toContain('lease_owner');
  });

  it('writes markdown to a file with -o', async () => {
    const result = await workspace.run(['export', sessionId, '--format', 'markdown', '-o', 'out/session.md', '--db', workspace.database]);
    expect(result.code).toBe(0);
    expect(result.stderr.trim()).toBe(`Wrote ${join(workspace.cwd, 'out', 'session.md')}`);
    const markdown = await readFile(join(workspace.cwd, 'out', 'session.md'), 'utf8');
    expect(markdown).toContain(`# Session ${sessionId}`);
    expect(markdown).toContain('scout');
    expect(markdown).toContain('Final answer: the workspace holds notes.txt and src/app.ts.');
  });

  it('refuses an unknown id and an unknown format with exit 2', async () => {
    expect((await workspace.run(['export', 'ses_nope', '--db', workspace.database])).code).toBe(2);
    const format = await workspace.run(['export', sessionId, '--format', 'yaml', '--db', workspace.database]);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain("argument 'yaml' is invalid");
  });

  it('lists the session in cadre sessions, and its runs in cadre runs', async () => {
    const sessions = await workspace.run(['sessions', '--db', workspace.database]);
    expect(sessions.stdout).toMatch(new RegExp(`^${sessionId}\\s+idle\\s+main\\s+openai-compatible:scripted\\s+\\S+\\s+1$`, 'm'));
    const json = await workspace.json<SessionRecord[]>(['sessions']);
    expect(json[0].id).toBe(sessionId);
    const runs = await workspace.run(['runs', sessionId, '--db', workspace.database]);
    expect(runs.stdout).toMatch(/^ID\s+STATUS\s+AGENT\s+DESCRIPTION\s+ELAPSED\s+TOKENS IN\/OUT\s+ACTIVITY$/m);
    expect(runs.stdout).toMatch(/^run_\w+\s+completed\s+scout\s+list the files\s+\d+s\s+\d+\/\d+\s+completed: The workspace/m);
  });
});

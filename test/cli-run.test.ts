import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord, SessionRecord } from '../src/store/records.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace;
beforeAll(async () => {
  workspace = await createWorkspace();
});
afterAll(() => workspace.close());

describe('cadre run', () => {
  it('delegates to a subagent in the foreground and prints only the final answer on stdout', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, 'delegate please']);
    expect(result.stderr).toMatch(/\[run_\w+ scout\] started: list the files/);
    expect(result.stderr).toMatch(/\[run_\w+ scout\] completed \(\d+s\): The workspace holds notes\.txt/);
    expect(result.stderr).toMatch(/cadre export ses_\w+ --format markdown/);
    expect(result.stdout).toBe('Final answer: the workspace holds notes.txt and src/app.ts.\n');
    expect(result.code).toBe(0);
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
    const runs = await workspace.json<RunRecord[]>(['runs', sessionId]);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'completed', agent: 'scout', mode: 'foreground' });
    expect(runs[0].result?.text).toBe('The workspace holds notes.txt and src/app.ts.');
    const toolResult = workspace.server.requests.flatMap((request) => request.messages).find((message) => message.role === 'tool');
    expect(toolResult?.content).toContain('notes.txt');
  });

  it('prints every answer of the primary agent on stdout off a terminal, the one given while a background run worked and the one after the auto-resume, in order', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, 'quick background']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/\[run_\w+ scout\] completed \(\d+s\): The short wait is over\./);
    expect(result.stdout).toBe('Started the scout in the background.\nNoted the notification.\n');
  });

  it('prints JSON Lines with --json, each with a type, ending with session-end', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, '--json', 'delegate please']);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    expect(lines.every((line) => typeof line.type === 'string')).toBe(true);
    expect(lines.some((line) => line.type === 'run-event')).toBe(true);
    expect(lines.some((line) => line.type === 'text-delta')).toBe(true);
    expect(lines.at(-1)).toMatchObject({
      type: 'session-end',
      status: 'completed',
      text: 'Final answer: the workspace holds notes.txt and src/app.ts.',
    });
    expect(String(lines.at(-1)!.session_id)).toMatch(/^ses_/);
  });

  it('continues a session with --session, and refuses an unknown one', async () => {
    const first = await workspace.run(['run', ...workspace.modelFlags, 'first question']);
    expect(first.stdout).toBe('First answer.\n');
    const sessionId = first.stderr.match(/Session (ses_\w+)/)![1];
    const second = await workspace.run(['run', ...workspace.modelFlags, '--session', sessionId, 'second question']);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('Continued the conversation that began with: first question\n');
    const sessions = await workspace.json<SessionRecord[]>(['sessions']);
    expect(sessions.filter((session) => session.id === sessionId)).toHaveLength(1);
    const unknown = await workspace.run(['run', ...workspace.modelFlags, '--session', 'ses_nope', 'hello']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe("cadre: No session 'ses_nope'. List sessions with: cadre sessions");
  });

  it('continues the most recent session with --continue', async () => {
    const first = await workspace.run(['run', ...workspace.modelFlags, 'first question']);
    const sessionId = first.stderr.match(/Session (ses_\w+)/)![1];
    const second = await workspace.run(['run', ...workspace.modelFlags, '--continue', 'second question']);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('Continued the conversation that began with: first question\n');
    expect(second.stderr).toContain(sessionId);
  });

  it('reads the prompt from stdin when there is no argument', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags], { input: 'echo this from stdin\n' });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Echo: echo this from stdin\n');
  });

  it('shows a run with its timeline', async () => {
    const [run] = await workspace.json<RunRecord[]>(['runs']);
    const shown = await workspace.run(['show', run.id, '--db', workspace.database]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`${run.id}  scout  ${run.status}`);
    expect(shown.stdout).toMatch(/run-queued\s+mode=foreground/);
    expect(shown.stdout).toMatch(/tool-call-start\s+list_files/);
    const missing = await workspace.run(['show', 'run_nope', '--db', workspace.database]);
    expect(missing.code).toBe(2);
  });
});

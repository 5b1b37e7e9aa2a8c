import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

// What a new user trying `cadre run` must see on stderr rather than only in an export.

let workspace: Workspace;
let scriptFolder: string;

/** Two background runs that end a few seconds apart: each notification needs an auto-resume of its own. */
const twoBackgroundRuns = `
- when: { system_includes: You are the scout, user_includes: FIRST TASK }
  turns: [{ delay_ms: 800, text: The first is done. }]
- when: { system_includes: You are the scout, user_includes: SECOND TASK }
  turns: [{ delay_ms: 3500, text: The second is done. }]
- when: { last_user_includes: ask the researcher }
  turns:
    - tool_calls: [{ name: agent, arguments: { agent: researcher, task: Survey the workspace., description: survey } }]
    - text: There is no researcher, so I answer myself.
- when: { last_user_includes: two in the background }
  turns:
    - tool_calls:
        - { name: agent, arguments: { agent: scout, task: FIRST TASK, description: first, run_in_background: true } }
        - { name: agent, arguments: { agent: scout, task: SECOND TASK, description: second, run_in_background: true } }
    - text: Started both.
`;

beforeEach(async () => {
  scriptFolder = await mkdtemp(join(tmpdir(), 'cadre-tryout-'));
  const script = join(scriptFolder, 'script.yaml');
  await writeFile(script, twoBackgroundRuns + (await readFile(resolve(import.meta.dirname, 'fixtures', 'script.yaml'), 'utf8')));
  workspace = await createWorkspace({ script });
});

afterEach(async () => {
  await workspace.close();
  await rm(scriptFolder, { recursive: true, force: true });
});

describe('cadre run tells the person', () => {
  it('that an MCP server failed to start, once per server', async () => {
    const config = {
      limits: { maxActivePerParent: 4 },
      mcpServers: { dead: { command: 'sh', args: ['-c', 'echo no such thing >&2; exit 3'] }, gone: { command: 'cadre-no-such-program-here' } },
    };
    await writeFile(join(workspace.cwd, 'cadre.config.json'), JSON.stringify(config));
    expect((await workspace.run(['trust'])).code).toBe(0);
    // The primary agent takes two steps (a delegation, then its answer): the servers are needed at each.
    const result = await workspace.run(['run', ...workspace.modelFlags, 'delegate please']);
    expect(result.code).toBe(0);
    const warnings = result.stderr.split('\n').filter((line) => line.startsWith('cadre: warning: MCP server'));
    expect(warnings).toHaveLength(2);
    expect(warnings.find((line) => line.includes("'dead'"))).toMatch(/^cadre: warning: MCP server 'dead' \(.*cadre\.config\.json\) failed to start: .+/);
    expect(warnings.find((line) => line.includes("'gone'"))).toMatch(/failed to start/);
  });
});

describe('cadre run says why a session stopped', () => {
  it('when the auto-resume cap leaves a notification waiting', async () => {
    await writeFile(join(workspace.cwd, 'cadre.config.json'), JSON.stringify({ limits: { maxActivePerParent: 4, maxAutoResumes: 1 } }));
    expect((await workspace.run(['trust'])).code).toBe(0);
    const result = await workspace.run(['run', ...workspace.modelFlags, 'two in the background']);
    expect(result.code).toBe(0);
    const sessionId = /Session (ses_\w+) \(completed\)/.exec(result.stderr)?.[1];
    expect(sessionId).toBeDefined();
    const line = result.stderr.split('\n').find((text) => text.startsWith('cadre: auto-resume stopped'));
    expect(line).toMatch(
      /^cadre: auto-resume stopped after 1 resume \(limits\.maxAutoResumes\); 1 notification waits for the next turn: (npx )?cadre run --session (ses_\w+) --db \S+ "\.\.\."$/,
    );
    expect(line).toContain(`--session ${sessionId} `);
  });

  it('not when the notifications were answered', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, 'two in the background']);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('auto-resume stopped');
  });
});

describe('cadre sessions shows where a session stands, as the dashboard does', () => {
  interface Listed {
    id: string;
    status: string;
    state: { kind: string; approvals?: number };
  }

  it('canceled after cadre stop while its runs worked, until its next turn', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, 'slow background']);
    await first.waitForStderr(/started: slow work/, 20_000);
    const [session] = await workspace.json<Listed[]>(['sessions']);
    expect((await workspace.run(['stop', session.id, '--db', workspace.database])).code).toBe(0);
    expect((await first.exited).code).toBe(130);

    const [stopped] = await workspace.json<Listed[]>(['sessions']);
    expect(stopped.state).toEqual({ kind: 'canceled' });
    const table = await workspace.run(['sessions', '--db', workspace.database]);
    expect(table.stdout).toMatch(/^ID\s+STATE\s+AGENT/m);
    expect(table.stdout).toMatch(new RegExp(`^${session.id}\\s+canceled\\s+main\\s`, 'm'));

    expect((await workspace.run(['run', ...workspace.modelFlags, '--session', session.id, 'second question'])).code).toBe(0);
    const [again] = await workspace.json<Listed[]>(['sessions']);
    expect(again.state).toEqual({ kind: 'idle' });
  });

  it('awaiting a person while an ask waits for approval', async () => {
    await writeFile(join(workspace.cwd, 'settings.env'), 'MODE=dev\n');
    const first = workspace.start(['run', ...workspace.modelFlags, '--approvals', 'wait', 'change the settings']);
    await first.waitForStderr(/\[apr_\w+\]/, 20_000);
    const [session] = await workspace.json<Listed[]>(['sessions']);
    expect(session.state.kind).toBe('awaiting_approval');
    const table = await workspace.run(['sessions', '--db', workspace.database]);
    expect(table.stdout).toMatch(new RegExp(`^${session.id}\\s+awaiting_approval\\(\\d\\)\\s+main\\s`, 'm'));
    await workspace.run(['stop', session.id, '--db', workspace.database]);
    expect((await first.exited).code).toBe(130);
  });
});

describe('cadre run shows a failed tool call of the primary agent', () => {
  it('as one line on stderr, the answer alone on stdout', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, 'ask the researcher']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('There is no researcher, so I answer myself.\n');
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('agent failed: '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^agent failed: .*Unknown agent 'researcher'/);
  });
});

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

// A Claude Code agent file as people write them: a description with ': ' in it (not valid YAML),
// Claude Code's tool names, model: inherit and a color.
const claudeAgent = `---
name: reader
description: Use this agent when: a file must be read. Examples: <example>Context: the user asks about notes</example>
tools: Read, Glob, LS, WebFetch
model: inherit
color: green
---
You are the claude reader. Read what you are asked to and report it.
`;

let workspace: Workspace;
beforeAll(async () => {
  workspace = await createWorkspace();
  await mkdir(join(workspace.cwd, '.claude', 'agents'), { recursive: true });
  await writeFile(join(workspace.cwd, '.claude', 'agents', 'reader.md'), claudeAgent);
});
afterAll(() => workspace.close());

function toolResults(): string[] {
  return workspace.server.requests
    .flatMap((request) => request.messages)
    .filter((message) => message.role === 'tool')
    .map((message) => String(message.content));
}

describe('agents people already have, from the command line', () => {
  it('lets the built-in main agent read a file, as the first example of the README does', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, 'read the notes yourself']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('I read notes.txt myself.\n');
    expect(toolResults().some((content) => content.includes('Remember the milk.'))).toBe(true);
  });

  it('runs a Claude Code agent file from .claude/agents unchanged, its tools mapped, and lists it with its source and warnings', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, 'ask the claude agent']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('The reader says: remember the milk.\n');
    // Only the agent a run talks to is reported by cadre run; this one is a subagent.
    expect(result.stderr).not.toContain('WebFetch');
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
    const [run] = await workspace.json<RunRecord[]>(['runs', sessionId]);
    expect(run).toMatchObject({ agent: 'reader', status: 'completed', result: { text: 'The notes say to remember the milk.' } });
    const shown = await workspace.json<{ events: Array<{ type: string; data: { tool?: string; ok?: boolean } }> }>(['show', run.id]);
    expect(shown.events.filter((event) => event.type === 'tool-call-end').map((event) => event.data)).toEqual([{ tool: 'read_file', ok: true }]);
    const listed = await workspace.json<{ agents: Array<{ name: string; source: string; tools: string[]; warnings: string[] }> }>(['agents']);
    expect(listed.agents.find((agent) => agent.name === 'reader')).toMatchObject({
      source: join(workspace.cwd, '.claude', 'agents', 'reader.md'),
      tools: ['read_file', 'list_files'],
      dropped_tools: ['WebFetch'],
      color: 'green',
      warning: `${join(workspace.cwd, '.claude', 'agents', 'reader.md')}: tools left out, it runs without them: WebFetch (no cadre equivalent)`,
    });
  });
});

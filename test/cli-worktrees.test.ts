import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorktreeEntry } from '../src/worktrees/worktree-records.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

const coderAgent = `---
description: Changes files in a worktree of its own.
tools: [write_file, read_file]
isolation: worktree
mode: subagent
---
You are the coder.
`;

let workspace: Workspace;
let runs: { notes: string; added: string };

function git(...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Person', '-c', 'user.email=person@example.com', ...args], {
    cwd: workspace.cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: workspace.cwd },
  });
}

beforeAll(async () => {
  workspace = await createWorkspace({
    script: [
      {
        when: { system_includes: 'You are the coder', user_includes: 'edit the notes' },
        turns: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'Remember the bread.\n' } }] }, { text: 'Edited the notes.' }],
      },
      {
        when: { system_includes: 'You are the coder', user_includes: 'add a todo' },
        turns: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'todo.txt', content: 'one\ntwo\n' } }] }, { text: 'Added todo.txt.' }],
      },
      {
        turns: [
          {
            tool_calls: [
              {
                name: 'agent_parallel',
                arguments: {
                  tasks: [
                    { agent: 'coder', task: 'edit the notes' },
                    { agent: 'coder', task: 'add a todo' },
                  ],
                },
              },
            ],
          },
          { text: 'Both done.' },
        ],
      },
    ],
  });
  await mkdir(join(workspace.cwd, '.cadre', 'agents'), { recursive: true });
  writeFileSync(join(workspace.cwd, '.cadre', 'agents', 'coder.md'), coderAgent);
  writeFileSync(join(workspace.cwd, '.gitignore'), '.cadre/\n');
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  const result = await workspace.run(['run', ...workspace.modelFlags, '--allow', 'write_file', 'go']);
  expect(result.code, result.stderr).toBe(0);
  const entries = await workspace.json<WorktreeEntry[]>(['worktrees']);
  runs = {
    notes: entries.find((entry) => entry.description === 'edit the notes')!.run_id,
    added: entries.find((entry) => entry.description === 'add a todo')!.run_id,
  };
}, 120_000);
afterAll(() => workspace.close());

describe('cadre worktrees, worktree diff, merge and remove', () => {
  it('lists each run with its branch and changes, while the workspace is untouched', async () => {
    const listed = await workspace.run(['worktrees', '--db', workspace.database]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^RUN\s+AGENT\s+STATUS\s+BRANCH\s+CHANGES$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${runs.added}\\s+coder\\s+completed\\s+cadre/${runs.added}\\s+1 file changed, \\+2 -0$`, 'm'));
    expect(listed.stdout).toMatch(new RegExp(`^${runs.notes}\\s+coder\\s+completed\\s+cadre/${runs.notes}\\s+1 file changed, \\+1 -1$`, 'm'));
    expect(readFileSync(join(workspace.cwd, 'notes.txt'), 'utf8')).toBe('Remember the milk.\n');
    expect(existsSync(join(workspace.cwd, 'todo.txt'))).toBe(false);
    expect(git('status', '--porcelain')).toBe('');
  });

  it('shows what a run changed, in cadre show too', async () => {
    const show = await workspace.run(['show', runs.notes, '--db', workspace.database]);
    expect(show.stdout).toContain(`worktree:    cadre/${runs.notes} (1 file changed, +1 -1); cadre worktree diff|merge ${runs.notes}`);
    const diff = await workspace.run(['worktree', 'diff', runs.notes, '--db', workspace.database]);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('-Remember the milk.');
    expect(diff.stdout).toContain('+Remember the bread.');
  });

  it('refuses a merge that conflicts, changing nothing, and merges the other', async () => {
    writeFileSync(join(workspace.cwd, 'notes.txt'), 'Remember the eggs.\n');
    git('commit', '-q', '-am', 'eggs');
    const head = git('rev-parse', 'HEAD');
    const conflict = await workspace.run(['worktree', 'merge', runs.notes, '--db', workspace.database]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('conflict in notes.txt');
    expect(git('rev-parse', 'HEAD')).toBe(head);
    expect(git('status', '--porcelain')).toBe('');
    const merged = await workspace.run(['worktree', 'merge', runs.added, '--db', workspace.database]);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stdout).toContain(`Merged cadre/${runs.added} (1 file changed, +2 -0)`);
    expect(readFileSync(join(workspace.cwd, 'todo.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(git('status', '--porcelain')).toBe('');
    expect(git('branch', '--list', `cadre/${runs.added}`)).toBe('');
    const left = await workspace.json<WorktreeEntry[]>(['worktrees']);
    expect(left.map((entry) => entry.run_id)).toEqual([runs.notes]);
  });

  it('refuses to remove unmerged changes without --force', async () => {
    const refused = await workspace.run(['worktree', 'remove', runs.notes, '--db', workspace.database]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not merged');
    const removed = await workspace.run(['worktree', 'remove', runs.notes, '--force', '--db', workspace.database]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(join(workspace.cwd, '.cadre', 'worktrees', runs.notes))).toBe(false);
    expect(await workspace.json<WorktreeEntry[]>(['worktrees'])).toEqual([]);
  });
});

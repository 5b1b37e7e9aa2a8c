// Three runs of the real agent programs (Claude Code, Codex, opencode), delegated at once by one
// agent_parallel call of cadre's own loop, each in a git worktree of its own (CONTRACT sections 20
// and 21, docs/worktrees.md): each program's scripted model edits the same line of the same
// tracked file differently, each run's change is committed on its branch cadre/<run_id>, and a
// person then merges them one by one from the CLI, the conflicts reported and nothing changed by
// them. The programs are not dependencies of cadre: .ci/run installs them and sets
// CADRE_TEST_CLAUDE, CADRE_TEST_CODEX and CADRE_TEST_OPENCODE.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import type { ScriptedRequest, ScriptedTurn } from '../src/testing/index.ts';
import type { WorktreeEntry } from '../src/worktrees/worktree-records.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';
import { opencodeConfig, writeCodexConfig } from './helpers/harness-programs.ts';

const programs = { claude: process.env.CADRE_TEST_CLAUDE, codex: process.env.CADRE_TEST_CODEX, opencode: process.env.CADRE_TEST_OPENCODE };
const missing = Object.entries(programs)
  .filter(([, path]) => path === undefined)
  .map(([name]) => `CADRE_TEST_${name.toUpperCase()}`);
if (missing.length > 0) console.warn(`harness-worktrees: skipping the three parallel runs: set ${missing.join(', ')} (.ci/run does)`);

/** The line each program writes as line 1 of README.txt, and the agent that carries it out. */
const edits = [
  { agent: 'claude-editor', harness: 'claude-code', task: 'Put the Claude line on top of README.txt.', line: 'Edited by Claude Code.' },
  { agent: 'codex-editor', harness: 'codex', task: 'Put the Codex line on top of README.txt.', line: 'Edited by Codex.' },
  { agent: 'opencode-editor', harness: 'opencode', task: 'Put the opencode line on top of README.txt.', line: 'Edited by opencode.' },
] as const;
const readme = 'The project.\nIt has three lines.\nThe end.\n';

/** The command each program's model runs: line 1 of README.txt replaced, in the folder it works in. */
const sedLine = (line: string) => `sed -i '1s/.*/${line}/' README.txt`;

/** The scripted model: cadre's primary agent on Chat Completions; Claude Code and opencode on Messages; Codex on Responses. */
function respond(request: ScriptedRequest): ScriptedTurn {
  const users = request.messages.filter((message) => message.role === 'user').map((message) => message.content);
  if (request.tools.includes('agent_parallel')) {
    return request.turn === 0
      ? { tool_calls: [{ name: 'agent_parallel', arguments: { tasks: edits.map(({ agent, task }) => ({ agent, task, isolation: 'worktree' })) } }] }
      : { text: 'All three edited README.txt.' };
  }
  const asked = (task: string) => users.some((content) => content.includes(task));
  if (request.tools.includes('Bash') && asked(edits[0].task)) {
    return request.turn === 0
      ? { text: 'Editing.', tool_calls: [{ name: 'Bash', arguments: { command: sedLine(edits[0].line), description: 'edit README' } }] }
      : { text: 'Claude Code edited README.txt.' };
  }
  if (request.tools.includes('exec_command') && asked(edits[1].task)) {
    return request.turn === 0
      ? { text: 'Editing.', tool_calls: [{ name: 'exec_command', arguments: { cmd: sedLine(edits[1].line) } }] }
      : { text: 'Codex edited README.txt.' };
  }
  if (request.tools.includes('bash') && asked(edits[2].task)) {
    return request.turn === 0
      ? { text: 'Editing.', tool_calls: [{ name: 'bash', arguments: { command: sedLine(edits[2].line), description: 'edit README' } }] }
      : { text: 'opencode edited README.txt.' };
  }
  // Claude Code's and opencode's side requests (titles and the like).
  return { text: 'A title' };
}

let workspace: Workspace | undefined;
let home: string | undefined;
let codexHome: string | undefined;
afterAll(async () => {
  await workspace?.close();
  for (const folder of [home, codexHome]) if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Person', '-c', 'user.email=person@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd },
  });
}

/** A git repository with README.txt committed, the three harness agents, and each program pointed at the scripted server. */
async function setUp(): Promise<{ workspace: Workspace; env: Record<string, string> }> {
  workspace = await createWorkspace({ script: respond });
  const { cwd } = workspace;
  for (const { agent, harness } of edits) {
    const file = `---\ndescription: Edits files with ${harness}.\nharness: ${harness}\nmode: subagent\n---\nYou edit files. Be brief.\n`;
    await writeFile(join(cwd, '.cadre', 'agents', `${agent}.md`), file);
  }
  await writeFile(join(cwd, 'README.txt'), readme);
  await writeFile(join(cwd, '.gitignore'), '.cadre/\n');
  git(cwd, 'init', '-q', '-b', 'main');
  git(cwd, 'add', '.');
  git(cwd, 'commit', '-q', '-m', 'first');

  // The programs' own homes and configuration stay out of the repository.
  await mkdir(join(homedir(), '.cache'), { recursive: true });
  home = await mkdtemp(join(homedir(), '.cache', 'cadre-test-home-'));
  // Codex makes its sandbox's helpers in its home, which must not be under the temporary folder.
  codexHome = join(home, 'codex');
  await mkdir(codexHome);
  await writeCodexConfig(codexHome, workspace.server.baseURL);
  await writeFile(join(home, 'opencode.json'), JSON.stringify(opencodeConfig(workspace.server.baseURL)));
  const bin = join(home, 'bin');
  await mkdir(bin);
  await symlink(programs.claude!, join(bin, 'claude'));
  await symlink(programs.codex!, join(bin, 'codex'));
  await symlink(programs.opencode!, join(bin, 'opencode'));
  const env = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: home,
    ANTHROPIC_BASE_URL: workspace.server.url,
    ANTHROPIC_API_KEY: 'test-anthropic-key',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CODEX_HOME: codexHome,
    SCRIPTED_API_KEY: 'test-key',
    OPENCODE_CONFIG: join(home, 'opencode.json'),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_SHARE: '1',
  };
  return { workspace, env };
}

describe('three harness programs in parallel, each in its own worktree', () => {
  it.skipIf(missing.length > 0)(
    missing.length > 0
      ? `skipped: set ${missing.join(', ')} to run it`
      : 'each edits line 1 of README.txt on its own branch; a person merges the first, and the other two conflict and change nothing',
    async () => {
      const { workspace, env } = await setUp();
      const { cwd } = workspace;
      const base = git(cwd, 'rev-parse', 'HEAD').trim();

      const result = await workspace.run(['run', ...workspace.modelFlags, '--yes', 'Edit README.txt three ways.'], { env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('All three edited README.txt.');

      // A person, from another process: three worktrees, each on its branch with its program's line.
      const entries = await workspace.json<WorktreeEntry[]>(['worktrees']);
      expect(entries).toHaveLength(3);
      const byAgent = Object.fromEntries(entries.map((entry) => [entry.agent, entry]));
      for (const { agent, line } of edits) {
        const entry = byAgent[agent];
        expect(entry, `${agent}: ${JSON.stringify(entries)}`).toMatchObject({
          status: 'completed',
          branch: `cadre/${entry?.run_id}`,
          files_changed: 1,
          insertions: 1,
          deletions: 1,
        });
        expect(git(cwd, 'show', `cadre/${entry.run_id}:README.txt`)).toBe(readme.replace('The project.', line));
        expect(git(cwd, 'rev-parse', `cadre/${entry.run_id}~1`).trim()).toBe(base);
        const { run } = await workspace.json<{ run: RunRecord }>(['show', entry.run_id]);
        expect(run).toMatchObject({ harness: { name: edits.find((edit) => edit.agent === agent)!.harness, pid: null } });
        expect(run.worktree?.path).toBe(join(cwd, '.cadre', 'worktrees', entry.run_id));
      }
      // The three ran at once: each started before any ended.
      const runs = await Promise.all(entries.map(async (entry) => (await workspace.json<{ run: RunRecord }>(['show', entry.run_id])).run));
      const lastStart = Math.max(...runs.map((run) => Date.parse(run.started_at!)));
      const firstEnd = Math.min(...runs.map((run) => Date.parse(run.ended_at!)));
      expect(lastStart).toBeLessThan(firstEnd);
      // The parent was told of each branch.
      const parentEnd = workspace.server.requests.find((request) => request.tools.includes('agent_parallel') && request.turn === 1);
      const told = parentEnd?.messages.findLast((message) => message.role === 'tool')?.content ?? '';
      for (const entry of entries) expect(told).toContain(`worktree: cadre/${entry.run_id} (1 file changed, +1 -1)`);
      expect(told).toContain(`(made from ${base.slice(0, 12)}; uncommitted changes of the workspace were not in it)`);
      // The workspace itself is untouched.
      expect(await readFile(join(cwd, 'README.txt'), 'utf8')).toBe(readme);
      expect(git(cwd, 'status', '--porcelain')).toBe('');
      expect(git(cwd, 'rev-parse', 'HEAD').trim()).toBe(base);

      // The first merges; the two others would conflict in README.txt and change nothing.
      const [first, ...others] = edits.map(({ agent }) => byAgent[agent].run_id);
      const merged = await workspace.run(['worktree', 'merge', first, '--db', workspace.database]);
      expect(merged.code, merged.stderr).toBe(0);
      expect(merged.stdout).toContain(`Merged cadre/${first} (1 file changed, +1 -1)`);
      expect(await readFile(join(cwd, 'README.txt'), 'utf8')).toBe(readme.replace('The project.', edits[0].line));
      expect(git(cwd, 'status', '--porcelain')).toBe('');
      expect(git(cwd, 'branch', '--list', `cadre/${first}`)).toBe('');
      const head = git(cwd, 'rev-parse', 'HEAD').trim();
      expect(head).not.toBe(base);
      for (const runId of others) {
        const conflict = await workspace.run(['worktree', 'merge', runId, '--db', workspace.database]);
        expect(conflict.code, conflict.stderr).toBe(1);
        expect(conflict.stderr).toContain(`Merging cadre/${runId} would conflict in README.txt; nothing was changed.`);
        expect(git(cwd, 'rev-parse', 'HEAD').trim()).toBe(head);
        expect(git(cwd, 'status', '--porcelain')).toBe('');
        expect(await readFile(join(cwd, 'README.txt'), 'utf8')).toBe(readme.replace('The project.', edits[0].line));
      }
      const left = await workspace.json<WorktreeEntry[]>(['worktrees']);
      expect(left.map((entry) => entry.run_id).sort()).toEqual([...others].sort());
    },
    240_000,
  );
});

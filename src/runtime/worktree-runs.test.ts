import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asSchema } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../agents/agent-definition.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type Script } from '../testing/index.ts';
import { createWorkspaceTools } from '../tools/workspace-tools.ts';
import { detectSandboxOnce } from '../tools/sandbox/detect-sandbox.ts';
import { formatRunOutput } from '../delegation/format-run-output.ts';
import { createDashboardApp } from '../server/create-server.ts';
import { createCadre, type Cadre } from './create-cadre.ts';
import { toolOutputs } from './runtime-fixtures.ts';

let base: string;
let repo: string;
const open: Cadre[] = [];

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'cadre-worktree-runs-')));
  repo = join(base, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 'Ada');
  git(repo, 'config', 'user.email', 'ada@example.com');
  writeFileSync(join(repo, 'a.txt'), 'a\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'first');
  // A change of the person's that is not committed: not in the run's worktree.
  writeFileSync(join(repo, 'draft.txt'), 'draft\n');
});

afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
  rmSync(base, { recursive: true, force: true });
});

const coder = defineAgent({
  name: 'coder',
  description: 'Changes code',
  system: 'Coder agent.',
  tools: ['write_file', 'bash', 'read_file'],
  isolation: 'worktree',
});
const reader = defineAgent({ name: 'reader', description: 'Reads code', system: 'Reader agent.', tools: ['read_file'] });

function makeCadre(script: Script, workspace = repo): Cadre {
  const store = createSqliteStore({ path: ':memory:' });
  const cadre = createCadre({
    store,
    model: scriptedLanguageModel(script),
    agents: [coder, reader],
    tools: createWorkspaceTools({ root: workspace, storeFiles: store.files, sandbox: { mode: 'required' } }),
    workspace,
    permissions: { allow: ['write', 'exec'] },
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return cadre;
}

async function finishedTurn(cadre: Cadre, text = 'go') {
  const session = await cadre.createSession();
  await cadre.send(session.id, text);
  await cadre.waitForIdle(session.id);
  return { session, messages: await cadre.store.listMessages(session.id) };
}

describe('runs in their own git worktree', () => {
  it('writes with write_file and bash (git too, inside the sandbox) in its worktree only, and commits the change on cadre/<run_id>', async () => {
    expect((await detectSandboxOnce()).available).toBe(true);
    const cadre = makeCadre([
      {
        when: { system_includes: 'Coder agent' },
        turns: [
          { tool_calls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'hello\n' } }] },
          {
            tool_calls: [
              {
                name: 'bash',
                arguments: {
                  command:
                    'echo from-bash >> b.txt && git add b.txt && git commit -q -m "by bash" && test ! -e draft.txt && pwd && touch ../../../escaped.txt; true',
                },
              },
            ],
          },
          { text: 'Wrote b.txt.' },
        ],
      },
      { turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'coder', task: 'Write b.txt' } }] }, { text: 'Done.' }] },
    ]);
    const { session, messages } = await finishedTurn(cadre);
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run.status).toBe('completed');
    const path = join(repo, '.cadre', 'worktrees', run.id);
    expect(run.worktree).toMatchObject({ path, branch: `cadre/${run.id}`, files_changed: 1, insertions: 2, deletions: 0 });
    // bash started in the worktree, and git worked there: its own commit is on the branch.
    const bash = toolOutputs(await cadre.store.listMessages(run.child_session_id), 'bash')[0];
    expect(bash).toContain(path);
    expect(git(repo, 'log', '--format=%s', `cadre/${run.id}`)).toContain('by bash');
    expect(git(repo, 'show', `cadre/${run.id}:b.txt`)).toBe('hello\nfrom-bash\n');
    expect(run.worktree?.commit).toBe(git(repo, 'rev-parse', `cadre/${run.id}`).trim());
    // The workspace is untouched: no b.txt, its draft still there, the worktrees out of git status.
    expect(existsSync(join(repo, 'b.txt'))).toBe(false);
    expect(existsSync(join(repo, 'escaped.txt'))).toBe(false);
    expect(readFileSync(join(repo, 'draft.txt'), 'utf8')).toBe('draft\n');
    expect(git(repo, 'status', '--porcelain')).toBe('?? draft.txt\n');
    const output = toolOutputs(messages, 'agent')[0];
    expect(output).toContain(`worktree: cadre/${run.id} (1 file changed, +2 -0)`);
    expect(output).toContain(`(made from ${run.worktree!.base.slice(0, 12)}; uncommitted changes of the workspace were not in it)`);
  });

  it('leaves nothing for a run that changed nothing, and runs without isolation in the workspace', async () => {
    const cadre = makeCadre([
      { when: { system_includes: 'Coder agent' }, turns: [{ tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] }, { text: 'Read it.' }] },
      { when: { system_includes: 'Reader agent' }, turns: [{ text: 'Nothing to do.' }] },
      {
        turns: [
          { tool_calls: [{ name: 'agent', arguments: { agent: 'coder', task: 'Read a.txt' } }] },
          { tool_calls: [{ name: 'agent', arguments: { agent: 'reader', task: 'Look' } }] },
          { text: 'Done.' },
        ],
      },
    ]);
    const { session, messages } = await finishedTurn(cadre);
    const runs = await cadre.store.listRuns({ parent_session_id: session.id, order: 'oldest' });
    expect(runs.map((run) => [run.agent, run.status, run.worktree])).toEqual([
      ['coder', 'completed', null],
      ['reader', 'completed', null],
    ]);
    expect(git(repo, 'branch', '--list', 'cadre/*')).toBe('');
    expect(git(repo, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    expect(toolOutputs(messages, 'agent')[0]).not.toContain('worktree: cadre/');
    expect(await cadre.worktrees()).toEqual([]);
  });

  it('offers isolation on agent and on each agent_parallel task of cadre.tools(), as cadre mcp lists them', async () => {
    const cadre = makeCadre([{ turns: [{ text: 'unused' }] }]);
    const tools = cadre.tools({ sessionId: 'app_1' });
    const agent = (await asSchema(tools.agent!.inputSchema).jsonSchema) as { properties: Record<string, { enum?: string[] }> };
    expect(agent.properties.isolation.enum).toEqual(['worktree']);
    const parallel = (await asSchema(tools.agent_parallel!.inputSchema).jsonSchema) as {
      properties: { tasks: { items: { properties: Record<string, { enum?: string[] }> } } };
    };
    expect(parallel.properties.tasks.items.properties.isolation.enum).toEqual(['worktree']);
  });

  it('gives the model a tool error and starts no run in a workspace that is not a git repository', async () => {
    const plain = join(base, 'plain');
    execFileSync('mkdir', ['-p', plain]);
    const cadre = makeCadre(
      [
        { when: { system_includes: 'Reader agent' }, turns: [{ text: 'never' }] },
        { turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'reader', task: 'Look', isolation: 'worktree' } }] }, { text: 'Done.' }] },
      ],
      plain,
    );
    const { session, messages } = await finishedTurn(cadre);
    expect(toolOutputs(messages, 'agent')[0]).toContain('is not a git repository');
    expect(await cadre.store.listRuns({ parent_session_id: session.id })).toEqual([]);
  });

  it("merges a run's worktree through the library, and refuses a second merge", async () => {
    const cadre = makeCadre([
      {
        when: { system_includes: 'Coder agent' },
        turns: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'b\n' } }] }, { text: 'ok' }],
      },
      { turns: [{ tool_calls: [{ name: 'agent_parallel', arguments: { tasks: [{ agent: 'coder', task: 'b' }] } }] }, { text: 'Done.' }] },
    ]);
    const { session } = await finishedTurn(cadre);
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect((await cadre.worktrees()).map((entry) => [entry.run_id, entry.files_changed, entry.exists])).toEqual([[run.id, 1, true]]);
    expect(await cadre.worktreeChanges(run.id)).toMatchObject({
      run_id: run.id,
      files: [{ path: 'b.txt', insertions: 1, deletions: 0 }],
      diff: expect.stringContaining('+b'),
    });
    // The dashboard shows the run's branch and counts on its card, and fetches the files and diff on demand.
    const app = createDashboardApp({
      cadre,
      onError: (error) => {
        throw error;
      },
    });
    const card = (await (await app.request(`/api/runs/${run.id}`)).json()) as { run: { worktree: { branch: string; files_changed: number } } };
    expect(card.run.worktree).toMatchObject({ branch: `cadre/${run.id}`, files_changed: 1 });
    const changes = await app.request(`/api/runs/${run.id}/worktree`);
    expect(changes.status).toBe(200);
    expect(await changes.json()).toMatchObject({ files: [{ path: 'b.txt', insertions: 1, deletions: 0 }], diff: expect.stringContaining('+b') });
    const merged = await cadre.mergeWorktree(run.id);
    expect(merged.merged_at).toEqual(expect.any(String));
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b\n');
    expect((await cadre.store.getRun(run.id))?.worktree?.merged_at).toBe(merged.merged_at);
    expect(await cadre.worktrees()).toEqual([]);
    await expect(cadre.mergeWorktree(run.id)).rejects.toThrow(/removed already/);
    expect((await app.request(`/api/runs/${run.id}/worktree`)).status).toBe(404);
  });

  it('gives a follow-up run the worktree of the run it follows; a fresh one from its branch tip once that one was merged', async () => {
    const cadre = makeCadre([
      {
        when: { system_includes: 'Coder agent', last_user_includes: 'Also write c.txt' },
        turns: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'c.txt', content: 'c\n' } }] }, { text: 'Wrote c.txt.' }],
      },
      {
        when: { system_includes: 'Coder agent', last_user_includes: 'And d.txt' },
        turns: [{ tool_calls: [{ name: 'bash', arguments: { command: 'cat b.txt c.txt > d.txt' } }] }, { text: 'Wrote d.txt.' }],
      },
      {
        when: { system_includes: 'Coder agent' },
        turns: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'b\n' } }] }, { text: 'Wrote b.txt.' }],
      },
      { when: { last_user_includes: 'subagent-notification' }, turns: [{ text: 'noted' }] },
      { turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'coder', task: 'Write b.txt' } }] }, { text: 'Done.' }] },
    ]);
    const { session } = await finishedTurn(cadre);
    const [first] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(first.worktree).toMatchObject({ branch: `cadre/${first.id}`, files_changed: 1 });
    const ended = async (runId: string) => {
      await expect.poll(async () => (await cadre.store.getRun(runId))?.status, { timeout: 20_000 }).toBe('completed');
      return (await cadre.store.getRun(runId))!;
    };
    // agent_send to the finished run: its follow-up works in the same worktree, on the same branch.
    const sent = await cadre.sendToRun(first.id, 'Also write c.txt');
    expect(sent.kind).toBe('follow-up');
    const second = await ended(sent.run.id);
    expect(second.worktree).toMatchObject({ path: first.worktree!.path, branch: `cadre/${first.id}`, base: first.worktree!.base, files_changed: 2 });
    expect(git(repo, 'ls-tree', '--name-only', `cadre/${first.id}`).split('\n')).toEqual(expect.arrayContaining(['b.txt', 'c.txt']));
    expect(git(repo, 'branch', '--list', 'cadre/*').trim().split('\n')).toHaveLength(1);
    expect(formatRunOutput(second)).toContain(`It goes on in the worktree of the run it follows (${first.id}).`);
    // Merged (which removes the worktree): the next follow-up gets a fresh worktree from the branch's tip, and is told so.
    await cadre.mergeWorktree(second.id);
    const third = await ended((await cadre.sendToRun(second.id, 'And d.txt')).run.id);
    expect(third.worktree).toMatchObject({ branch: `cadre/${third.id}`, base: second.worktree!.commit, files_changed: 1 });
    expect(git(repo, 'show', `cadre/${third.id}:d.txt`)).toBe('b\nc\n');
    expect(formatRunOutput(third)).toContain(`The worktree of the run it follows (${second.id}) was merged or removed`);
  });
});

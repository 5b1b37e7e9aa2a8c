import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceTools } from '../tools/workspace-tools.ts';
import type { CliContext } from './cli-context.ts';
import { main } from './main.ts';

let root: string;
let cwd: string;
let home: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'cadre-cli-agents-'));
  cwd = join(root, 'project');
  home = join(root, 'home');
  await mkdir(join(cwd, '.claude', 'agents'), { recursive: true });
  await mkdir(join(cwd, '.opencode', 'agent'), { recursive: true });
  await mkdir(join(cwd, '.cadre', 'agents'), { recursive: true });
  await mkdir(join(home, '.claude', 'agents'), { recursive: true });
  await writeFile(join(home, '.claude', 'agents', 'planner.md'), '---\nname: planner\ndescription: Plans work.\nmodel: opus\n---\nPlan.');
  await writeFile(
    join(cwd, '.claude', 'agents', 'code-reviewer.md'),
    '---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\ncolor: purple\n---\nReview.',
  );
  await writeFile(
    join(cwd, '.opencode', 'agent', 'docs.md'),
    '---\ndescription: Writes docs.\nmode: subagent\nmodel: openai/gpt-4o\ntemperature: 0.3\n---\nDocs.',
  );
  await writeFile(join(cwd, '.opencode', 'agent', 'broken.md'), '---\nmode: boss\nmax_turns: 0\n---\nBroken.');
});

afterEach(() => rm(root, { recursive: true, force: true }));

function context(): { value: CliContext; stdout: () => string; stderr: () => string } {
  let stdout = '';
  let stderr = '';
  return {
    value: {
      cwd,
      env: { HOME: home, CADRE_DB: ':memory:' },
      stdin: { isTTY: true, async *[Symbol.asyncIterator]() {} },
      stdout: { write: (text) => ((stdout += text), true) },
      stderr: { write: (text) => ((stderr += text), true) },
    },
    stdout: () => stdout,
    stderr: () => stderr,
  };
}

describe('cadre agents', () => {
  it('lists Claude Code and opencode agents with where each came from, their warnings and the files that failed', async () => {
    const io = context();
    expect(await main(['agents', '--json'], io.value)).toBe(0);
    const document = JSON.parse(io.stdout());
    const byName = Object.fromEntries(document.agents.map((agent: { name: string }) => [agent.name, agent]));
    const everyTool = Object.keys(createWorkspaceTools({ root: cwd }));
    expect(byName.main).toMatchObject({ source: 'built-in', tools: everyTool, tool_selection: { kind: 'all' } });
    expect(byName.general).toMatchObject({ tools: everyTool });
    // No ANTHROPIC_API_KEY: a Claude tier runs on the session's model, said once for all files.
    expect(byName.planner).toMatchObject({ source: join(home, '.claude', 'agents', 'planner.md'), model: 'opus', resolved_model: null, tools: everyTool });
    expect(byName['code-reviewer']).toMatchObject({
      source: join(cwd, '.claude', 'agents', 'code-reviewer.md'),
      tools: ['read_file', 'list_files', 'grep', 'bash'],
      tool_selection: { kind: 'list', names: ['read_file', 'grep', 'list_files', 'bash'] },
      color: 'purple',
      warnings: [],
      extra: {},
    });
    expect(byName.docs).toMatchObject({ mode: 'subagent', resolved_model: null, extra: { temperature: 0.3 } });
    expect(document.errors).toHaveLength(1);
    expect(document.errors[0].problems.map((problem: { field: string }) => problem.field)).toEqual(['description', 'max_turns', 'mode']);
    expect(document.warnings).toEqual([]);
    expect(document.unused_keys).toEqual({ temperature: 1 });
    expect(document.model_fallbacks).toBe(
      "agents run on the session's model instead of the one their file names: sonnet (1 file), opus (1 file) needs ANTHROPIC_API_KEY, which is not set; " +
        'openai/gpt-4o (1 file) needs OPENAI_API_KEY, which is not set. Choose one with modelAliases in cadre.config.json',
    );
  });

  it('resolves Claude tiers to Anthropic where ANTHROPIC_API_KEY is set, and modelAliases first', async () => {
    const io = context();
    io.value.env.ANTHROPIC_API_KEY = 'sk-test-key-000';
    await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ modelAliases: { opus: 'openai-compatible:big' } }));
    expect(await main(['agents', '--json'], io.value)).toBe(0);
    const byName = Object.fromEntries(JSON.parse(io.stdout()).agents.map((agent: { name: string }) => [agent.name, agent]));
    expect(byName['code-reviewer'].resolved_model).toBe('anthropic:claude-sonnet-4-5');
    expect(byName.planner.resolved_model).toBe('openai-compatible:big');
  });

  it('shows the source of each agent in its table and reports problems on stderr', async () => {
    const io = context();
    expect(await main(['agents'], io.value)).toBe(0);
    expect(io.stdout()).toMatch(/NAME\s+MODE\s+MODEL\s+TOOLS\s+SOURCE/);
    expect(io.stdout()).toMatch(/code-reviewer\s+all\s+sonnet \(session model\)\s+4 tools\s+\.claude\/agents\/code-reviewer\.md/);
    expect(io.stdout()).toMatch(/main\s+primary\s+\(session model\)\s+all \(\d\)\s+built-in/);
    expect(io.stderr()).toContain(`1 agent file(s) did not load:\n${join(cwd, '.opencode', 'agent', 'broken.md')}: description: required`);
    expect(io.stderr()).toContain('note: front-matter keys cadre does not use, kept under "extra" in --json: temperature (1 file)');
  });

  it('says once which models fall back, and marks the tools a file lists that this runtime lacks', async () => {
    await writeFile(join(cwd, '.claude', 'agents', 'odd.md'), '---\ndescription: Odd.\nmodel: gpt5\ntools: Read, WebFetch, TaskList\n---\nOdd.');
    const io = context();
    expect(await main(['agents'], io.value)).toBe(0);
    expect(io.stdout()).toMatch(/odd\s+all\s+gpt5 \(session model\)\s+read_file \(2 dropped\)/);
    expect(io.stderr()).toContain(
      `warning: ${join(cwd, '.claude', 'agents', 'odd.md')}: tools left out, it runs without them: WebFetch, TaskList (no cadre equivalent)\n`,
    );
    expect(io.stderr()).toMatch(/note: agents run on the session's model .*gpt5 \(1 file\) is no model cadre knows/);
  });
  it("shows a program's agent with the model its file names (or the program's own) and the program's own tools", async () => {
    await writeFile(join(cwd, '.cadre', 'agents', 'coder.md'), '---\ndescription: Codes.\nharness: codex\nmodel: gpt-5\n---\nCode.');
    await writeFile(join(cwd, '.cadre', 'agents', 'helper.md'), '---\ndescription: Helps.\nharness: claude-code\n---\nHelp.');
    const io = context();
    expect(await main(['agents'], io.value)).toBe(0);
    expect(io.stdout()).toMatch(/coder\s+\S+\s+gpt-5\s+\(the program's\)/);
    expect(io.stdout()).toMatch(/helper\s+\S+\s+\(the program's\)\s+\(the program's\)/);
  });

  it('lists the workflow tool for an agent that names it, and for no other', async () => {
    await writeFile(join(cwd, '.claude', 'agents', 'conductor.md'), '---\ndescription: Runs workflows.\ntools: read_file, workflow\n---\nConduct.');
    const io = context();
    expect(await main(['agents', '--json'], io.value)).toBe(0);
    const { agents } = JSON.parse(io.stdout()) as { agents: { name: string; tools: string[] }[] };
    const byName = Object.fromEntries(agents.map((agent) => [agent.name, agent]));
    expect(byName.conductor?.tools).toEqual(['read_file', 'workflow']);
    expect(byName['code-reviewer']?.tools).not.toContain('workflow');
    expect(byName.general?.tools).not.toContain('workflow');
  });
});

describe('cadre agents and rules on delegation', () => {
  it("shows the rules on delegation in effect (an untrusted workspace's allow rule left out), and how to write one when there is none", async () => {
    const none = context();
    expect(await main(['agents'], none.value)).toBe(0);
    expect(none.stdout()).toContain('Delegation rules: none, every delegation is allowed (add agent(NAME) or agent(model:PATTERN) rules');

    // An untrusted workspace's allow rule is left out; its deny and ask rules narrow and apply.
    await writeFile(
      join(cwd, 'cadre.config.json'),
      JSON.stringify({ permissions: { deny: ['Task(model:openai:*)', 'bash'], ask: ['agent(docs)'], allow: ['agent(review-*)'] } }),
    );
    const some = context();
    expect(await main(['agents'], some.value)).toBe(0);
    expect(some.stdout()).toContain('Delegation rules: deny Task(model:openai:*); ask agent(docs) (agent(NAME), agent(model:PATTERN)');
    const trusted = context();
    expect(await main(['agents', '--trust'], trusted.value)).toBe(0);
    expect(trusted.stdout()).toContain('Delegation rules: deny Task(model:openai:*); ask agent(docs); allow agent(review-*) (agent(NAME)');

    const json = context();
    expect(await main(['agents', '--json'], json.value)).toBe(0);
    expect(JSON.parse(json.stdout()).delegation_rules).toEqual({ allow: [], ask: ['agent(docs)'], deny: ['Task(model:openai:*)'] });
  });
});

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
  await mkdir(join(home, '.claude', 'agents'), { recursive: true });
  await writeFile(join(home, '.claude', 'agents', 'planner.md'), '---\nname: planner\ndescription: Plans work.\nmodel: opus\n---\nPlan.');
  await writeFile(
    join(cwd, '.claude', 'agents', 'code-reviewer.md'),
    '---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\ncolor: purple\n---\nReview.',
  );
  await writeFile(join(cwd, '.opencode', 'agent', 'docs.md'), '---\ndescription: Writes docs.\nmode: subagent\nmodel: openai/gpt-4o\ntemperature: 0.3\n---\nDocs.');
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
    expect(byName.main).toMatchObject({ source: 'built-in', tools: ['read_file', 'list_files', 'grep'] });
    expect(byName.planner).toMatchObject({ source: join(home, '.claude', 'agents', 'planner.md'), model: 'opus', resolved_model: 'anthropic:claude-opus-4-5' });
    expect(byName['code-reviewer']).toMatchObject({
      source: join(cwd, '.claude', 'agents', 'code-reviewer.md'),
      tools: ['read_file', 'grep', 'list_files', 'bash'],
      resolved_model: 'anthropic:claude-sonnet-4-5',
      warnings: ['color: not a cadre key; kept, not used'],
      extra: { color: 'purple' },
    });
    expect(byName.docs).toMatchObject({ mode: 'subagent', resolved_model: 'openai:gpt-4o', extra: { temperature: 0.3 } });
    expect(document.errors).toHaveLength(1);
    expect(document.errors[0].problems.map((problem: { field: string }) => problem.field)).toEqual(['description', 'max_turns', 'mode']);
    expect(document.warnings).toEqual(
      expect.arrayContaining([
        `${join(cwd, '.claude', 'agents', 'code-reviewer.md')}: color: not a cadre key; kept, not used`,
        `${join(cwd, '.opencode', 'agent', 'docs.md')}: temperature: not a cadre key; kept, not used`,
      ]),
    );
    // Until a bash tool exists, the agent that lists it is told so, and only it.
    const bashProblems = document.warnings.filter((warning: string) => warning.includes("unknown tool 'bash'"));
    const bashExists = 'bash' in createWorkspaceTools({ root: cwd });
    expect(bashProblems).toEqual(bashExists ? [] : [expect.stringMatching(new RegExp(`^${join(cwd, '.claude', 'agents', 'code-reviewer.md')}: tools: unknown tool 'bash': this agent fails until it exists`))]);
  });

  it('shows the source of each agent in its table and reports problems on stderr', async () => {
    const io = context();
    expect(await main(['agents'], io.value)).toBe(0);
    expect(io.stdout()).toMatch(/NAME\s+MODE\s+MODEL\s+SOURCE/);
    expect(io.stdout()).toMatch(/code-reviewer\s+all\s+sonnet \(anthropic:claude-sonnet-4-5\)\s+\.claude\/agents\/code-reviewer\.md/);
    expect(io.stdout()).toMatch(/main\s+primary\s+\(session model\)\s+built-in/);
    expect(io.stderr()).toContain(`1 agent file(s) did not load:\n${join(cwd, '.opencode', 'agent', 'broken.md')}: description: required`);
    expect(io.stderr()).toContain('warning: .claude/agents/code-reviewer.md: color: not a cadre key; kept, not used'.replace('.claude', join(cwd, '.claude')));
  });

  it('warns about a model name that is neither a spec nor an alias', async () => {
    await writeFile(join(cwd, '.claude', 'agents', 'odd.md'), '---\ndescription: Odd.\nmodel: gpt5\n---\nOdd.');
    const io = context();
    expect(await main(['agents', '--json'], io.value)).toBe(0);
    expect(JSON.parse(io.stdout()).warnings).toContain(
      `${join(cwd, '.claude', 'agents', 'odd.md')}: model: 'gpt5' is no model spec and no alias: add it to modelAliases in cadre.config.json (known: sonnet, opus, haiku)`,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { parseAgentFile } from './parse-agent-file.ts';

const path = '/x/.cadre/agents/researcher.md';

function failure(text: string, filePath = path) {
  const result = parseAgentFile(filePath, text);
  if (result.ok) throw new Error('expected the file to be rejected');
  return result.error;
}

describe('parseAgentFile', () => {
  it('reads every front-matter key and uses the trimmed body as the system prompt', () => {
    const text = [
      '---',
      'description: Finds facts.',
      'model: anthropic:claude-sonnet-4-5',
      'tools: [read_file, grep]',
      'max_turns: 7',
      'mode: subagent',
      '---',
      '',
      'You are a careful researcher.',
      '',
    ].join('\n');
    expect(parseAgentFile(path, text)).toEqual({
      ok: true,
      agent: {
        name: 'researcher',
        description: 'Finds facts.',
        model: 'anthropic:claude-sonnet-4-5',
        tools: ['read_file', 'grep'],
        maxTurns: 7,
        mode: 'subagent',
        system: 'You are a careful researcher.',
        source: path,
      },
    });
  });

  it('defaults the mode to all, prefers an explicit name, and accepts CRLF and a comma-separated tool list', () => {
    const result = parseAgentFile(path, '---\r\nname: finder\r\ndescription: d\r\ntools: read_file, grep\r\n---\r\nBody');
    expect(result).toMatchObject({ ok: true, agent: { name: 'finder', mode: 'all', tools: ['read_file', 'grep'], system: 'Body' } });
  });

  it('reports a missing description with the path and the field on one line', () => {
    const error = failure('---\nmode: subagent\n---\nBody');
    expect(error.field).toBe('description');
    expect(error.path).toBe(path);
    expect(error.message).toMatch(/^\/x\/\.cadre\/agents\/researcher\.md: description: required/);
    expect(error.message).not.toContain('\n');
  });

  it('reports invalid YAML with the file line number and no field', () => {
    const error = failure('---\ndescription: [unclosed\nmode: all\n---\n');
    expect(error.field).toBeNull();
    expect(error.message).toContain('invalid YAML in front matter');
    expect(error.message).not.toContain('\n');
  });

  it('keeps an unknown key and reports it as a warning, suggesting the snake_case spelling of a known one', () => {
    const result = parseAgentFile(path, '---\ndescription: d\ncolor: blue\nmaxTurns: 3\nhooks: { bash: ask }\n---\n');
    expect(result).toMatchObject({ ok: true, agent: { extra: { color: 'blue', maxTurns: 3, hooks: { bash: 'ask' } } } });
    if (!result.ok) return;
    expect(result.agent.warnings).toEqual([
      'color: not a cadre key; kept, not used',
      'maxTurns: not a cadre key; kept, not used (did you mean max_turns?)',
      'hooks: not a cadre key; kept, not used',
    ]);
  });

  it('loads a Claude Code agent file unchanged: tool names mapped and deduplicated, short model name kept for the aliases', () => {
    const text = [
      '---',
      'name: code-reviewer',
      'description: Expert code review specialist. Use proactively after writing code.',
      'tools: Read, Grep, Glob, LS, Bash, Edit, MultiEdit, Write, WebFetch',
      'model: sonnet',
      'color: purple',
      '---',
      'You are a senior code reviewer.',
    ].join('\n');
    const result = parseAgentFile('/p/.claude/agents/code-reviewer.md', text);
    expect(result).toMatchObject({
      ok: true,
      agent: {
        name: 'code-reviewer',
        model: 'sonnet',
        tools: ['read_file', 'grep', 'list_files', 'bash', 'edit_file', 'write_file'],
        mode: 'all',
        system: 'You are a senior code reviewer.',
        extra: { color: 'purple' },
      },
    });
    if (!result.ok) return;
    expect(result.agent.warnings).toEqual(['color: not a cadre key; kept, not used', "tools: 'WebFetch' has no cadre equivalent and is left out"]);
  });

  it('reads front matter that is not valid YAML line by line, as Claude Code does, with a warning', () => {
    const text = [
      '---',
      'name: test-runner',
      'description: Use this agent when: tests fail. Examples: <example>Context: the user ran npm test</example>',
      'tools:',
      '  - Read',
      '  - Bash',
      'model: haiku',
      '---',
      'Run the tests.',
    ].join('\n');
    const result = parseAgentFile('/p/.claude/agents/test-runner.md', text);
    expect(result).toMatchObject({
      ok: true,
      agent: {
        name: 'test-runner',
        description: 'Use this agent when: tests fail. Examples: <example>Context: the user ran npm test</example>',
        tools: ['read_file', 'bash'],
        model: 'haiku',
      },
    });
    expect(result.ok && result.agent.warnings?.[0]).toMatch(/^front matter is not valid YAML \(.*\); read line by line, as Claude Code does$/);
  });

  it('reads model: inherit as the session model and tools as a YAML list of Claude Code names', () => {
    const result = parseAgentFile(path, '---\ndescription: d\nmodel: inherit\ntools:\n  - Read\n  - Glob\n---\n');
    expect(result).toMatchObject({ ok: true, agent: { tools: ['read_file', 'list_files'] } });
    expect(result.ok && result.agent.model).toBeUndefined();
  });

  it("loads an opencode agent file: provider/model, a tools map of names to booleans, and its own keys as warnings", () => {
    const text = '---\ndescription: Reviews code\nmode: subagent\nmodel: anthropic/claude-sonnet-4-5\ntemperature: 0.1\ntools:\n  write: false\n  edit: false\n  read: true\n  grep: true\n---\nReview.';
    const result = parseAgentFile('/p/.opencode/agent/review.md', text);
    expect(result).toMatchObject({ ok: true, agent: { name: 'review', mode: 'subagent', model: 'anthropic/claude-sonnet-4-5', tools: ['read_file', 'grep'], extra: { temperature: 0.1 } } });
    const offOnly = parseAgentFile(path, '---\ndescription: d\ntools:\n  write: false\n  grep: false\n---\n');
    expect(offOnly).toMatchObject({ ok: true, agent: { tools: ['read_file', 'list_files'] } });
  });

  it('reports every problem of a file, not just the first, on one line', () => {
    const error = failure('---\nmode: boss\nmax_turns: 0\ntools: 3\ncolor: red\n---\n');
    expect(error.problems.map((problem) => problem.field)).toEqual(['description', 'tools', 'max_turns', 'mode']);
    expect(error.field).toBe('description');
    expect(error.message).toMatch(/^\/x\/\.cadre\/agents\/researcher\.md: description: required .*; tools: .*; max_turns: .*; mode: must be one of/);
    expect(error.message).not.toContain('\n');
    expect(failure('---\nmode: boss\n---\n', '/a/My Agent.md').problems.map((problem) => problem.field)).toEqual(['name', 'description', 'mode']);
  });

  it.each([
    ['max_turns: 0', 'max_turns'],
    ['max_turns: 2.5', 'max_turns'],
    ['max_turns: many', 'max_turns'],
    ['name: Bad Name', 'name'],
    ['mode: boss', 'mode'],
    ['model: claude sonnet', 'model'],
    ['tools: { read: maybe }', 'tools'],
    ['tools: 3', 'tools'],
  ])('rejects %s as field %s', (line, field) => {
    expect(failure(`---\ndescription: d\n${line}\n---\n`).field).toBe(field);
  });

  it('rejects a file name that is not a valid agent name unless the front matter names the agent', () => {
    expect(failure('---\ndescription: d\n---\n', '/a/My Agent.md')).toMatchObject({ field: 'name' });
    expect(parseAgentFile('/a/My Agent.md', '---\nname: mine\ndescription: d\n---\n').ok).toBe(true);
  });

  it('explains a missing or unclosed front matter block', () => {
    expect(failure('You are helpful.').message).toContain('missing front matter');
    expect(failure('---\ndescription: d\n').message).toContain('not closed');
    expect(failure('---\n- a\n- b\n---\n').message).toContain('YAML keys and values');
  });
});

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
        tools: { kind: 'list', names: ['read_file', 'grep'] },
        maxTurns: 7,
        mode: 'subagent',
        system: 'You are a careful researcher.',
        source: path,
      },
    });
  });

  it('defaults the mode to all, prefers an explicit name, and accepts CRLF and a comma-separated tool list', () => {
    const result = parseAgentFile(path, '---\r\nname: finder\r\ndescription: d\r\ntools: read_file, grep\r\n---\r\nBody');
    expect(result).toMatchObject({ ok: true, agent: { name: 'finder', mode: 'all', tools: { kind: 'list', names: ['read_file', 'grep'] }, system: 'Body' } });
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

  it("reads Claude Code's own keys, and keeps the keys cadre does not use in extra, without warnings", () => {
    const result = parseAgentFile(
      path,
      '---\ndescription: d\ncolor: blue\nmaxTurns: 3\ndisallowedTools: Write, Bash(rm:*)\nhooks: { bash: ask }\nemoji: x\n---\n',
    );
    expect(result).toMatchObject({
      ok: true,
      agent: { color: 'blue', maxTurns: 3, disallowedTools: ['write_file', 'bash'], extra: { hooks: { bash: 'ask' }, emoji: 'x' } },
    });
    expect(result.ok && result.agent.warnings).toBeUndefined();
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
        tools: { kind: 'list', names: ['read_file', 'grep', 'list_files', 'bash', 'edit_file', 'write_file', 'WebFetch'] },
        mode: 'all',
        system: 'You are a senior code reviewer.',
        color: 'purple',
      },
    });
  });

  it('reads front matter that is not valid YAML line by line, as Claude Code does', () => {
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
        tools: { kind: 'list', names: ['read_file', 'bash'] },
        model: 'haiku',
      },
    });
  });

  it('reads model: inherit as the session model and tools as a YAML list of Claude Code names', () => {
    const result = parseAgentFile(path, '---\ndescription: d\nmodel: inherit\ntools:\n  - Read\n  - Glob\n---\n');
    expect(result).toMatchObject({ ok: true, agent: { tools: { kind: 'list', names: ['read_file', 'list_files'] } } });
    expect(result.ok && result.agent.model).toBeUndefined();
  });

  it('loads an opencode agent file: provider/model, and a tools map that turns tools off from every tool', () => {
    const text =
      '---\ndescription: Reviews code\nmode: subagent\nmodel: anthropic/claude-sonnet-4-5\ntemperature: 0.1\ntools:\n  write: false\n  edit: false\n  read: true\n  grep: true\n---\nReview.';
    const result = parseAgentFile('/p/.opencode/agent/review.md', text);
    expect(result).toMatchObject({
      ok: true,
      agent: {
        name: 'review',
        mode: 'subagent',
        model: 'anthropic/claude-sonnet-4-5',
        tools: { kind: 'all' },
        disallowedTools: ['write_file', 'edit_file'],
        extra: { temperature: 0.1 },
      },
    });
  });

  it('reports every problem of a file, not just the first, on one line', () => {
    const error = failure('---\nmode: boss\nmax_turns: 0\ntools: 3\ncolor: [red]\n---\n');
    expect(error.problems.map((problem) => problem.field)).toEqual(['description', 'tools', 'max_turns', 'mode', 'color']);
    expect(error.field).toBe('description');
    expect(error.message).toMatch(/^\/x\/\.cadre\/agents\/researcher\.md: description: required .*; tools: .*; max_turns: .*; mode: must be one of/);
    expect(error.message).not.toContain('\n');
    expect(failure('---\nmode: boss\n---\n', '/a/123.md').problems.map((problem) => problem.field)).toEqual(['name', 'description', 'mode']);
  });

  it.each([
    ['max_turns: 0', 'max_turns'],
    ['max_turns: 2.5', 'max_turns'],
    ['max_turns: many', 'max_turns'],
    ['name: "42"', 'name'],
    ['mode: boss', 'mode'],
    ['model: [sonnet]', 'model'],
    ['tools: { read: maybe }', 'tools'],
    ['tools: 3', 'tools'],
  ])('rejects %s as field %s', (line, field) => {
    expect(failure(`---\ndescription: d\n${line}\n---\n`).field).toBe(field);
  });

  it('slugs a name with spaces or capitals for the id and keeps it as the display name; accepts dots', () => {
    expect(parseAgentFile('/a/x.md', '---\nname: Frontend Developer\ndescription: d\n---\n')).toMatchObject({
      ok: true,
      agent: { name: 'frontend-developer', displayName: 'Frontend Developer' },
    });
    expect(parseAgentFile('/a/My Agent.md', '---\ndescription: d\n---\n')).toMatchObject({ ok: true, agent: { name: 'my-agent' } });
    expect(parseAgentFile('/a/x.md', '---\nname: CodeReviewer\ndescription: d\n---\n')).toMatchObject({
      ok: true,
      agent: { name: 'code-reviewer', displayName: 'CodeReviewer' },
    });
    const dotted = parseAgentFile('/a/x.md', '---\nname: dotnet-framework-4.8-expert\ndescription: d\n---\n');
    expect(dotted).toMatchObject({ ok: true, agent: { name: 'dotnet-framework-4.8-expert' } });
    expect(dotted.ok && dotted.agent.displayName).toBeUndefined();
    expect(failure('---\ndescription: d\n---\n', '/a/123.md')).toMatchObject({ field: 'name' });
  });

  it('in an opencode folder takes the id from the file name and shows the name key', () => {
    const result = parseAgentFile('/p/.opencode/agent/reviewer.md', '---\nname: CodeReviewer\ndescription: d\n---\n', { opencode: true });
    expect(result).toMatchObject({ ok: true, agent: { name: 'reviewer', displayName: 'CodeReviewer' } });
  });

  it('reads an opencode map that turns every tool off with "*": false as the list of those it turns on', () => {
    const result = parseAgentFile(path, '---\ndescription: d\ntools:\n  "*": false\n  read: true\n  grep: true\n---\n');
    expect(result).toMatchObject({ ok: true, agent: { tools: { kind: 'list', names: ['read_file', 'grep'] } } });
  });

  it('reads no tools line, an empty one and an empty string as every tool, and tools: [] as none', () => {
    for (const line of ['', 'tools:\n', 'tools: ""\n', 'tools: {}\n']) {
      expect(parseAgentFile(path, `---\ndescription: d\n${line}---\n`)).toMatchObject({ ok: true, agent: { tools: { kind: 'all' } } });
    }
    expect(parseAgentFile(path, '---\ndescription: d\ntools: []\n---\n')).toMatchObject({ ok: true, agent: { tools: { kind: 'list', names: [] } } });
  });

  it('reads Tool(pattern) entries as the tool, Task as the delegation every agent has, and keeps names cadre lacks for the runtime to drop', () => {
    const result = parseAgentFile(path, '---\ndescription: d\ntools: Bash(git diff:*), Read, Task, TaskList, mcp__github__create_issue\n---\n');
    expect(result).toMatchObject({ ok: true, agent: { tools: { kind: 'list', names: ['bash', 'read_file', 'TaskList', 'mcp__github__create_issue'] } } });
  });

  it('applies permissionMode plan, and keeps acceptEdits and bypassPermissions with a warning saying how a person grants the same', () => {
    expect(parseAgentFile(path, '---\ndescription: d\npermissionMode: plan\n---\n')).toMatchObject({ ok: true, agent: { permissionMode: 'plan' } });
    const widening = parseAgentFile(path, '---\ndescription: d\npermissionMode: acceptEdits\n---\n');
    expect(widening).toMatchObject({ ok: true, agent: { permissionMode: 'acceptEdits' } });
    expect(widening.ok && widening.agent.warnings).toEqual([expect.stringMatching(/^permissionMode: acceptEdits not applied .*--allow write_file/)]);
    const unknown = parseAgentFile(path, '---\ndescription: d\npermissionMode: yolo\n---\n');
    expect(unknown.ok && unknown.agent.permissionMode).toBeUndefined();
  });

  it('keeps mcpServers as data: names and inline definitions', () => {
    const text = '---\ndescription: d\nmcpServers:\n  - github\n  - local:\n      command: node\n      args: [server.js]\n---\n';
    expect(parseAgentFile(path, text)).toMatchObject({
      ok: true,
      agent: { mcpServers: [{ name: 'github' }, { name: 'local', config: { command: 'node', args: ['server.js'] } }] },
    });
  });

  it("turns opencode's permission map into rules that can only narrow", () => {
    const text = '---\ndescription: d\npermission:\n  edit: deny\n  bash:\n    "git diff*": allow\n    "*": ask\n  webfetch: deny\n---\n';
    expect(parseAgentFile(path, text)).toMatchObject({
      ok: true,
      agent: { permissions: { allow: ['bash(git diff*)'], ask: ['bash'], deny: ['write_file', 'edit_file'] } },
    });
  });

  it('explains a missing or unclosed front matter block', () => {
    expect(failure('You are helpful.').message).toContain('missing front matter');
    expect(failure('---\ndescription: d\n').message).toContain('not closed');
    expect(failure('---\n- a\n- b\n---\n').message).toContain('YAML keys and values');
  });
});

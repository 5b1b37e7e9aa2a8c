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

  it('rejects an unknown key by name and suggests the snake_case spelling', () => {
    expect(failure('---\ndescription: d\ncolor: blue\n---\n')).toMatchObject({ field: 'color' });
    const error = failure('---\ndescription: d\nmaxTurns: 3\n---\n');
    expect(error.field).toBe('maxTurns');
    expect(error.message).toContain('did you mean max_turns?');
  });

  it.each([
    ['max_turns: 0', 'max_turns'],
    ['max_turns: 2.5', 'max_turns'],
    ['max_turns: many', 'max_turns'],
    ['name: Bad Name', 'name'],
    ['mode: boss', 'mode'],
    ['model: claude', 'model'],
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

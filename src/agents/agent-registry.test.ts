import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/index.ts';
import { defineAgent, type AgentInput } from './agent-definition.ts';
import { AgentRegistry } from './agent-registry.ts';

const registry = new AgentRegistry([
  defineAgent({ name: 'lead', description: 'Leads.', mode: 'primary' }),
  defineAgent({ name: 'writer', description: 'Writes\n  prose.', mode: 'all' }),
  defineAgent({ name: 'coder', description: 'Codes.', mode: 'subagent' }),
]);

describe('AgentRegistry', () => {
  it('offers subagent and all agents for delegation, sorted, one line each', () => {
    expect(registry.delegable().map((agent) => agent.name)).toEqual(['coder', 'writer']);
    expect(registry.describeDelegable()).toBe('coder: Codes.\nwriter: Writes prose.');
  });

  it('names the delegable agents when an agent is unknown', () => {
    expect(registry.unknownAgentMessage('x')).toBe("Unknown agent 'x'. Available agents: coder, writer");
    expect(new AgentRegistry([]).unknownAgentMessage('x')).toBe("Unknown agent 'x'. Available agents: (none)");
  });

  it('runs primary and all agents as primary and refuses subagents and unknown names', () => {
    expect(registry.primary('lead').name).toBe('lead');
    expect(registry.primary('writer').name).toBe('writer');
    expect(() => registry.primary('coder')).toThrow(/is a subagent.*Primary agents: lead, writer/);
    expect(() => registry.primary('nobody')).toThrow("Unknown agent 'nobody'. Primary agents: lead, writer");
  });

  it('lets a later definition replace an earlier one of the same name', () => {
    const replaced = new AgentRegistry([defineAgent({ name: 'a', description: 'old' }), defineAgent({ name: 'a', description: 'new' })]);
    expect(replaced.list()).toHaveLength(1);
    expect(replaced.get('a')?.description).toBe('new');
  });
});

describe('defineAgent', () => {
  it('fills defaults and marks the source as code', () => {
    expect(defineAgent({ name: 'helper', description: ' Helps. ', system: '  Be brief.\n' })).toEqual({
      name: 'helper',
      description: 'Helps.',
      system: 'Be brief.',
      mode: 'all',
      tools: { kind: 'all' },
      source: 'code',
    });
    expect(defineAgent({ name: 'reader', description: 'Reads.', tools: ['read_file', 'mcp__github__*'], disallowedTools: ['grep'] })).toMatchObject({
      tools: { kind: 'list', names: ['read_file', 'mcp__github__*'] },
      disallowedTools: ['grep'],
    });
    expect(defineAgent({ name: 'none', description: 'Has none.', tools: [] }).tools).toEqual({ kind: 'list', names: [] });
  });

  it('refuses a permission mode that would widen what a code agent may do', () => {
    expect(() => defineAgent({ name: 'x', description: 'd', permissionMode: 'acceptEdits' as 'plan' })).toThrow(/permissionMode: must be 'default' or 'plan'/);
  });

  it.each<[Record<string, unknown>, RegExp]>([
    [{ name: 'Bad', description: 'd' }, /^Agent 'Bad': name: 'Bad' must match/],
    [{ name: 'ok', description: '' }, /^Agent 'ok': description: must not be empty/],
    [{ name: 'ok', description: 'd', maxTurns: 0 }, /maxTurns: must be a whole number of at least 1/],
    [{ name: 'ok', description: 'd', max_turns: 3 }, /max_turns: unknown key \(did you mean maxTurns\?\)/],
  ])('throws a ConfigError naming the field for %o', (input, message) => {
    let thrown: unknown;
    try {
      defineAgent(input as unknown as AgentInput);
    } catch (error) {
      thrown = error;
    }
    expect(ConfigError.isInstance(thrown)).toBe(true);
    expect((thrown as Error).message).toMatch(message);
  });
});

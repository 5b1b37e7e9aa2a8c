import { describe, expect, it } from 'vitest';
import { defineAgent } from './agent-definition.ts';
import { parseAgentFile } from './parse-agent-file.ts';

describe("an agent's permissions", () => {
  it('are read from the front matter', () => {
    const parsed = parseAgentFile(
      '/agents/coder.md',
      '---\ndescription: Codes\ntools: [bash]\npermissions:\n  deny: [network]\n  allow: ["bash(npm test*)"]\n---\nYou code.\n',
    );
    expect(parsed).toMatchObject({ ok: true, agent: { name: 'coder', permissions: { deny: ['network'], allow: ['bash(npm test*)'] } } });
  });

  it('report a bad rule with the file and the field', () => {
    const parsed = parseAgentFile('/agents/coder.md', '---\ndescription: Codes\npermissions:\n  deny: ["bash("]\n---\nYou code.\n');
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.field).toBe('permissions');
    expect(parsed.error.message).toContain("/agents/coder.md: permissions: deny: Invalid permission rule 'bash('");
  });

  it('report an unknown decision', () => {
    const parsed = parseAgentFile('/agents/coder.md', '---\ndescription: Codes\npermissions: { maybe: [bash] }\n---\nYou code.\n');
    expect(parsed.ok).toBe(false);
  });

  it('are checked for agents defined in code too', () => {
    expect(defineAgent({ name: 'coder', description: 'Codes', permissions: { ask: ['write'] } }).permissions).toEqual({ ask: ['write'] });
    expect(() => defineAgent({ name: 'coder', description: 'Codes', permissions: { deny: ['two words'] } })).toThrow(
      /Agent 'coder': permissions: deny: Invalid permission rule 'two words'/,
    );
  });
});

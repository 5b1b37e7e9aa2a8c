import { describe, expect, it } from 'vitest';
import { cadreToolName, mapAgentToolNames, toolsWithoutEquivalent } from './agent-tool-names.ts';

describe('agent tool names', () => {
  it("reads Claude Code's SendMessage as agent_send, a delegation tool every agent below the depth cap has anyway", () => {
    expect(cadreToolName('SendMessage')).toBe('agent_send');
    expect(toolsWithoutEquivalent.has('SendMessage')).toBe(false);
    // Left out of the workspace tools like Task: the delegation tools come with the depth.
    expect(mapAgentToolNames(['Read', 'SendMessage', 'Task'])).toEqual(['read_file']);
  });
});

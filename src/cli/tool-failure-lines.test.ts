import { describe, expect, it } from 'vitest';
import { toolFailureLines } from './tool-failure-lines.ts';

const result = (toolCallId: string, toolName: string, output: unknown) => ({ type: 'tool-result', toolCallId, toolName, output });

describe('toolFailureLines', () => {
  it('is one line per failed result of a tool message: the tool and the first line of its error, cut to 200 characters', () => {
    const lines = toolFailureLines({
      role: 'tool',
      content: [
        result('c1', 'agent', { type: 'error-text', value: "Unknown agent 'researcher'.\nAvailable: scout" }),
        result('c2', 'read_file', { type: 'text', value: 'fine' }),
        result('c3', 'mcp__x__y', { type: 'error-json', value: { error: 'boom' } }),
        result('c4', 'bash', { type: 'execution-denied', reason: 'denied' }),
        result('c5', 'write_file', { type: 'error-text', value: 'x'.repeat(300) }),
      ],
    });
    expect(lines.map((line) => line.toolCallId)).toEqual(['c1', 'c3', 'c5']);
    expect(lines[0].line).toBe("agent failed: Unknown agent 'researcher'.");
    expect(lines[1].line).toBe('mcp__x__y failed: {"error":"boom"}');
    expect(lines[2].line).toBe(`write_file failed: ${'x'.repeat(199)}…`);
  });

  it('says why a result in the agent shape failed: its error line, or the body of a denied section, not its header', () => {
    const denied = "agent: counter\nstatus: denied (no run was started)\n\nDelegation denied by the rule deny 'agent(counter)'.\n---\nagent: other";
    const failed = 'run_id: run_1\nagent: counter\nstatus: failed\nerror: model_error: the provider did not answer';
    const lines = toolFailureLines({
      role: 'tool',
      content: [result('c1', 'agent_parallel', { type: 'error-text', value: denied }), result('c2', 'agent', { type: 'error-text', value: failed })],
    });
    expect(lines.map((line) => line.line)).toEqual([
      "agent_parallel failed: Delegation denied by the rule deny 'agent(counter)'.",
      'agent failed: model_error: the provider did not answer',
    ]);
  });

  it('is nothing for other messages', () => {
    expect(toolFailureLines({ role: 'assistant', content: [result('c1', 'agent', { type: 'error-text', value: 'no' })] })).toEqual([]);
    expect(toolFailureLines({ role: 'tool', content: 'text' })).toEqual([]);
  });
});

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

  it('is nothing for other messages', () => {
    expect(toolFailureLines({ role: 'assistant', content: [result('c1', 'agent', { type: 'error-text', value: 'no' })] })).toEqual([]);
    expect(toolFailureLines({ role: 'tool', content: 'text' })).toEqual([]);
  });
});

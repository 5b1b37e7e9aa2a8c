import type { ToolSet } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../tools/define-tool.ts';
import { listsOptInTool, selectAgentTools, toolPatternMatches } from './tool-selection.ts';

const tool = (name: string, risk: 'read' | 'write' | 'exec' | 'network') =>
  defineTool({ name, description: name, risk, inputSchema: z.object({}), execute: () => name });

// What a runtime might have once MCP servers are configured: workspace tools and two servers' tools.
const available: ToolSet = {
  read_file: tool('read_file', 'read'),
  grep: tool('grep', 'read'),
  write_file: tool('write_file', 'write'),
  bash: tool('bash', 'exec'),
  mcp__github__create_issue: tool('mcp__github__create_issue', 'network'),
  mcp__github__list_issues: tool('mcp__github__list_issues', 'read'),
  mcp__github_enterprise__search: tool('mcp__github_enterprise__search', 'network'),
};

describe('selectAgentTools', () => {
  it('gives an agent without a list every tool the runtime has, MCP tools included', () => {
    expect(selectAgentTools({ tools: { kind: 'all' } }, available).names).toEqual(Object.keys(available));
  });

  it('gives a list only what it names, matches MCP wildcards and server names, and reports what the runtime lacks', () => {
    const selected = selectAgentTools({ tools: { kind: 'list', names: ['read_file', 'mcp__github__*', 'WebFetch', 'mcp__slack__post'] } }, available);
    expect(selected.names).toEqual(['read_file', 'mcp__github__create_issue', 'mcp__github__list_issues']);
    expect(selected.missing).toEqual(['WebFetch', 'mcp__slack__post']);
    expect(selectAgentTools({ tools: { kind: 'list', names: ['mcp__github'] } }, available).names).toEqual([
      'mcp__github__create_issue',
      'mcp__github__list_issues',
    ]);
    expect(selectAgentTools({ tools: { kind: 'list', names: [] } }, available)).toMatchObject({ names: [], missing: [] });
  });

  it('takes disallowed tools away, by name or pattern', () => {
    const selected = selectAgentTools({ tools: { kind: 'all' }, disallowedTools: ['bash', 'mcp__github__*'] }, available);
    expect(selected.names).toEqual(['read_file', 'grep', 'write_file', 'mcp__github_enterprise__search']);
  });

  it('keeps only the read tools under permissionMode plan', () => {
    const selected = selectAgentTools({ tools: { kind: 'all' }, permissionMode: 'plan' }, available);
    expect(selected.names).toEqual(['read_file', 'grep', 'mcp__github__list_issues']);
    expect(selected.narrowed).toEqual(['write_file', 'bash', 'mcp__github__create_issue', 'mcp__github_enterprise__search']);
    // A tool cadre knows nothing about (not made with defineTool) is no read tool.
    expect(
      selectAgentTools({ tools: { kind: 'all' }, permissionMode: 'plan' }, { raw: { description: 'x', inputSchema: z.object({}) } as never }).names,
    ).toEqual([]);
  });
});

describe('toolPatternMatches', () => {
  it.each([
    ['read_file', 'read_file', true],
    ['read_file', 'read_files', false],
    ['mcp__github__*', 'mcp__github__x', true],
    ['mcp__github__*', 'mcp__github_enterprise__x', false],
    ['mcp__github', 'mcp__github__x', true],
    ['mcp__github', 'mcp__github_enterprise__x', false],
    ['*', 'anything', true],
  ])('%s matches %s: %s', (pattern, name, expected) => {
    expect(toolPatternMatches(pattern, name)).toBe(expected);
  });
});

describe('listsOptInTool', () => {
  it('gives the workflow tool only to an agent whose list names it exactly, and never reports it missing', () => {
    expect(listsOptInTool({ tools: { kind: 'all' } }, 'workflow')).toBe(false);
    expect(listsOptInTool({ tools: { kind: 'list', names: ['*'] } }, 'workflow')).toBe(false);
    expect(listsOptInTool({ tools: { kind: 'list', names: ['work*'] } }, 'workflow')).toBe(false);
    expect(listsOptInTool({ tools: { kind: 'list', names: ['read_file', 'workflow'] } }, 'workflow')).toBe(true);
    expect(listsOptInTool({ tools: { kind: 'list', names: ['workflow'] }, disallowedTools: ['workflow'] }, 'workflow')).toBe(false);
    expect(selectAgentTools({ tools: { kind: 'list', names: ['read_file', 'workflow'] } }, available).missing).toEqual([]);
  });
});

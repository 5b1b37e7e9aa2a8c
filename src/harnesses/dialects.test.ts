import { describe, expect, it } from 'vitest';
import { claudeCodeDialect } from './claude-code-dialect.ts';
import { codexDialect } from './codex-dialect.ts';
import type { HarnessStart } from './harness-dialect.ts';
import { opencodeDialect } from './opencode-dialect.ts';

const start: HarnessStart = {
  prompt: '-x do it',
  system: 'Be brief.',
  maxTurns: 7,
  scratch: '/tmp/none',
  allowed: { write: true, exec: false, network: false },
};

describe('Claude Code', () => {
  it('starts in stream-json both ways with cadre answering its asks, never skipping permissions, and no settings file', async () => {
    const invocation = await claudeCodeDialect.invocation({ ...start, model: 'sonnet', sessionId: 'abc' });
    expect(invocation.args).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--input-format',
      'stream-json',
      '--verbose',
      '--permission-prompt-tool',
      'stdio',
      '--setting-sources',
      '',
      '--max-turns',
      '7',
      '--append-system-prompt',
      'Be brief.',
      '--model',
      'sonnet',
      '--resume',
      'abc',
    ]);
    expect(invocation.args.join(' ')).not.toMatch(/dangerously|bypassPermissions/);
    expect(invocation.input).toEqual([JSON.stringify({ type: 'user', message: { role: 'user', content: '-x do it' } })]);
  });

  it('reads its session, text, tool calls and results, asks, and its end with usage counting cached input', () => {
    const parse = claudeCodeDialect.createParser();
    expect(parse({ type: 'system', subtype: 'init', session_id: 's1' })).toEqual([{ type: 'session', id: 's1' }]);
    expect(
      parse({
        type: 'assistant',
        message: {
          content: [
            { type: 'text', text: 'Hi.' },
            { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } },
          ],
        },
      }),
    ).toEqual([
      { type: 'text', text: 'Hi.' },
      { type: 'tool-call', id: 't1', name: 'Bash', input: { command: 'ls' } },
    ]);
    expect(
      parse({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a.ts' }], is_error: false }] } }),
    ).toEqual([{ type: 'tool-result', id: 't1', output: 'a.ts', ok: true }]);
    expect(parse({ type: 'control_request', request_id: 'r1', request: { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'rm x' } } })).toEqual([
      { type: 'ask', id: 'r1', tool: 'Bash', input: { command: 'rm x' } },
    ]);
    expect(
      parse({
        type: 'result',
        subtype: 'success',
        result: 'Done.',
        total_cost_usd: 0.5,
        usage: { input_tokens: 10, output_tokens: 3, cache_read_input_tokens: 60, cache_creation_input_tokens: 30 },
      }),
    ).toEqual([
      { type: 'usage', input_tokens: 100, output_tokens: 3, cache_read_tokens: 60, cache_write_tokens: 30, cost_usd: 0.5 },
      { type: 'result', text: 'Done.' },
    ]);
    expect(parse({ type: 'result', subtype: 'error_max_turns', usage: {} }).at(-1)).toEqual({ type: 'result', text: '', maxTurns: true });
    expect(parse({ type: 'result', subtype: 'error_during_execution', is_error: true, errors: ['boom'], usage: {} }).at(-1)).toEqual({
      type: 'result',
      text: '',
      error: 'boom',
    });
  });

  it("is not given the tools cadre's rules deny, and has an ask rule for those they may ask about, where it would not ask", async () => {
    expect(claudeCodeDialect.ruledTools).toEqual(['bash', 'read_file', 'write_file', 'edit_file', 'grep', 'list_files', 'WebFetch', 'WebSearch']);
    const { args } = await claudeCodeDialect.invocation({
      ...start,
      tools: { read_file: 'deny', grep: 'deny', bash: 'ask', edit_file: 'ask', WebFetch: 'ask' },
    });
    const at = (flag: string) => args[args.indexOf(flag) + 1];
    expect(at('--disallowedTools')).toBe('Read,Grep');
    expect(JSON.parse(at('--settings'))).toEqual({ permissions: { ask: ['Bash', 'Edit', 'MultiEdit', 'NotebookEdit', 'WebFetch'] } });
    // Its settings files stay out all the same: these rules come from cadre alone.
    expect(at('--setting-sources')).toBe('');
    const none = await claudeCodeDialect.invocation({ ...start, tools: {} });
    expect(none.args).not.toContain('--disallowedTools');
    expect(none.args).not.toContain('--settings');
  });

  it('answers an ask in its control protocol', () => {
    const ask = { type: 'ask' as const, id: 'r1', tool: 'Bash', input: { command: 'ls' } };
    expect(JSON.parse(claudeCodeDialect.answer!(ask, { allow: true }))).toEqual({
      type: 'control_response',
      response: { subtype: 'success', request_id: 'r1', response: { behavior: 'allow', updatedInput: { command: 'ls' } } },
    });
    expect(JSON.parse(claudeCodeDialect.answer!(ask, { allow: false, message: 'no' })).response.response).toEqual({ behavior: 'deny', message: 'no' });
  });
});

describe('Codex', () => {
  it('gets its sandbox and approval policy from cadre as -c overrides, which exec resume takes too', async () => {
    const invocation = await codexDialect.invocation({ ...start, sessionId: 'th1' });
    expect(invocation.args).toEqual([
      'exec',
      'resume',
      '--json',
      '--skip-git-repo-check',
      '-c',
      'approval_policy="never"',
      '-c',
      'sandbox_mode="workspace-write"',
      '-c',
      'sandbox_workspace_write.network_access=false',
      '-c',
      'developer_instructions="Be brief."',
      'th1',
      '--',
      '-x do it',
    ]);
    expect((await codexDialect.invocation({ ...start, allowed: { write: false, exec: false, network: false } })).args).toContain('sandbox_mode="read-only"');
  });

  it('reads its items as text, tool calls and results, and its turn as usage and end', () => {
    const parse = codexDialect.createParser();
    expect(parse({ type: 'thread.started', thread_id: 'th1' })).toEqual([{ type: 'session', id: 'th1' }]);
    const command = { id: 'item_1', type: 'command_execution', command: 'cat a', aggregated_output: 'A', exit_code: 0, status: 'completed' };
    expect(parse({ type: 'item.started', item: { ...command, exit_code: null } })).toEqual([
      { type: 'tool-call', id: 'item_1', name: 'shell', input: { command: 'cat a' } },
    ]);
    expect(parse({ type: 'item.completed', item: command })).toEqual([{ type: 'tool-result', id: 'item_1', output: 'A', ok: true }]);
    expect(parse({ type: 'item.completed', item: { id: 'item_2', type: 'agent_message', text: 'Done.' } })).toEqual([{ type: 'text', text: 'Done.' }]);
    expect(parse({ type: 'turn.completed', usage: { input_tokens: 50, cached_input_tokens: 20, output_tokens: 4 } })).toEqual([
      { type: 'usage', input_tokens: 50, output_tokens: 4, cache_read_tokens: 20, cache_write_tokens: 0 },
      { type: 'result', text: '' },
    ]);
    expect(parse({ type: 'turn.failed', error: { message: 'quota' } })).toEqual([{ type: 'result', text: '', error: 'quota' }]);
  });
});

describe('opencode', () => {
  it('runs an agent cadre adds to its configuration, with permissions from cadre', async () => {
    const invocation = await opencodeDialect.invocation({ ...start, sessionId: 'ses_1' });
    expect(invocation.args).toEqual(['run', '--format', 'json', '--agent', 'cadre', '--session', 'ses_1', '--', '-x do it']);
    expect(JSON.parse(invocation.env!.OPENCODE_CONFIG_CONTENT)).toEqual({
      agent: { cadre: { mode: 'primary', prompt: 'Be brief.', steps: 7, permission: { edit: 'allow', bash: 'deny', webfetch: 'deny' } } },
    });
  });

  it('adds up its steps as usage, and ends at a step that called no tool', () => {
    const parse = opencodeDialect.createParser();
    expect(parse({ type: 'step_start', sessionID: 'ses_1', part: {} })).toEqual([{ type: 'session', id: 'ses_1' }]);
    expect(
      parse({
        type: 'tool_use',
        sessionID: 'ses_1',
        part: { tool: 'bash', callID: 'c1', state: { status: 'completed', input: { command: 'ls' }, output: 'a', metadata: { exit: 1 } } },
      }),
    ).toEqual([
      { type: 'tool-call', id: 'c1', name: 'bash', input: { command: 'ls' } },
      { type: 'tool-result', id: 'c1', output: 'a', ok: false },
    ]);
    const step = (reason: string) => ({
      type: 'step_finish',
      sessionID: 'ses_1',
      part: { reason, tokens: { input: 10, output: 2, cache: { read: 5, write: 0 } }, cost: 0.01 },
    });
    expect(parse(step('tool-calls'))).toEqual([
      { type: 'usage', input_tokens: 15, output_tokens: 2, cache_read_tokens: 5, cache_write_tokens: 0, cost_usd: 0.01 },
    ]);
    expect(parse(step('stop'))).toEqual([
      { type: 'usage', input_tokens: 30, output_tokens: 4, cache_read_tokens: 10, cache_write_tokens: 0, cost_usd: 0.02 },
      { type: 'result', text: '' },
    ]);
  });
});

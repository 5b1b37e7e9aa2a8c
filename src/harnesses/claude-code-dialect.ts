import type { HarnessDialect, HarnessEvent, HarnessToolRules } from './harness-dialect.ts';

/** Claude Code's tool names, as cadre's rules and activity line name them. */
const toolNames: Readonly<Record<string, string>> = {
  Bash: 'bash',
  Read: 'read_file',
  Write: 'write_file',
  Edit: 'edit_file',
  MultiEdit: 'edit_file',
  NotebookEdit: 'edit_file',
  Grep: 'grep',
  Glob: 'list_files',
  LS: 'list_files',
};

/** Claude Code's tools cadre's rules are given to when it starts: those it maps, and its web tools (rated `network`). */
const ownRuledTools = [...Object.keys(toolNames), 'WebFetch', 'WebSearch'];

/**
 * Claude Code in print mode with stream-json both ways (`claude -p --output-format stream-json
 * --input-format stream-json --verbose`): the task goes in as a user message, its permission asks
 * come out as `can_use_tool` control requests (`--permission-prompt-tool stdio`, as its SDK drives
 * it) and are answered on stdin; stdin stays open for messages while it works.
 */
export const claudeCodeDialect: HarnessDialect = {
  name: 'claude-code',
  program: 'claude',
  install: 'npm install -g @anthropic-ai/claude-code',
  asksMidRun: true,
  ruledTools: [...new Set(ownRuledTools.map((name) => toolNames[name] ?? name))],

  invocation(start) {
    // No settings files: their allow lists and modes would widen what cadre's rules allow.
    const args = [
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
    ];
    args.push(...ruleArguments(start.tools ?? {}));
    args.push('--max-turns', String(start.maxTurns));
    if (start.system.trim() !== '') args.push('--append-system-prompt', start.system);
    if (start.model !== undefined) args.push('--model', start.model);
    if (start.sessionId !== undefined) args.push('--resume', start.sessionId);
    return { args, input: [userLine(start.prompt)], interactive: true };
  },

  createParser: () => parse,

  answer(ask, { allow, message }) {
    const response = allow ? { behavior: 'allow', updatedInput: ask.input } : { behavior: 'deny', message: message ?? 'Denied by cadre.' };
    return JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: ask.id, response } });
  },

  message: (text) => userLine(text),

  toolName: (name) => toolNames[name] ?? name,
};

/**
 * cadre's rules where Claude Code would otherwise use a tool without asking (Read, and Bash for
 * commands it deems read-only): a tool cadre denies outright is not given to it
 * (`--disallowedTools`), and one cadre may ask about gets an `ask` rule (`--settings`, which
 * `--setting-sources ''` leaves in force), so that each of its uses comes to cadre as a prompt.
 */
function ruleArguments(tools: HarnessToolRules): string[] {
  const decided = (decision: 'ask' | 'deny') => ownRuledTools.filter((name) => tools[toolNames[name] ?? name] === decision);
  const [disallowed, ask] = [decided('deny'), decided('ask')];
  const args: string[] = [];
  if (disallowed.length > 0) args.push('--disallowedTools', disallowed.join(','));
  if (ask.length > 0) args.push('--settings', JSON.stringify({ permissions: { ask } }));
  return args;
}

/** The events of one line of Claude Code's stream-json output. */
function parse(line: Record<string, unknown>): HarnessEvent[] {
  switch (line.type) {
    case 'system':
      return line.subtype === 'init' && typeof line.session_id === 'string' ? [{ type: 'session', id: line.session_id }] : [];
    case 'assistant':
      return contentOf(line).flatMap((block): HarnessEvent[] => {
        if (block.type === 'text' && typeof block.text === 'string') return [{ type: 'text', text: block.text }];
        if (block.type === 'tool_use') return [{ type: 'tool-call', id: String(block.id), name: String(block.name), input: block.input ?? {} }];
        return [];
      });
    case 'user':
      return contentOf(line).flatMap((block): HarnessEvent[] =>
        block.type === 'tool_result'
          ? [{ type: 'tool-result', id: String(block.tool_use_id), output: textOf(block.content), ok: block.is_error !== true }]
          : [],
      );
    case 'control_request': {
      const request = line.request as Record<string, unknown> | undefined;
      if (request?.subtype !== 'can_use_tool') return [];
      const input = typeof request.input === 'object' && request.input !== null ? (request.input as Record<string, unknown>) : {};
      return [{ type: 'ask', id: String(line.request_id), tool: String(request.tool_name), input }];
    }
    case 'result':
      return resultEvents(line);
    default:
      return [];
  }
}

function userLine(text: string): string {
  return JSON.stringify({ type: 'user', message: { role: 'user', content: text } });
}

function contentOf(line: Record<string, unknown>): Array<Record<string, unknown>> {
  const content = (line.message as { content?: unknown } | undefined)?.content;
  return Array.isArray(content) ? content.filter((block): block is Record<string, unknown> => typeof block === 'object' && block !== null) : [];
}

/** A tool result's content: a string, or blocks of which the text ones count. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block) => (typeof block?.text === 'string' ? block.text : '')).join('');
}

/** The end of an invocation: its totals (Anthropic's input tokens leave out the cached ones; cadre's count them) and its result. */
function resultEvents(line: Record<string, unknown>): HarnessEvent[] {
  const usage = (line.usage ?? {}) as Record<string, number | undefined>;
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const events: HarnessEvent[] = [
    {
      type: 'usage',
      input_tokens: (usage.input_tokens ?? 0) + cacheRead + cacheWrite,
      output_tokens: usage.output_tokens ?? 0,
      cache_read_tokens: cacheRead,
      cache_write_tokens: cacheWrite,
      ...(typeof line.total_cost_usd === 'number' ? { cost_usd: line.total_cost_usd } : {}),
    },
  ];
  const text = typeof line.result === 'string' ? line.result : '';
  if (line.subtype === 'error_max_turns') {
    events.push({ type: 'result', text, maxTurns: true });
    return events;
  }
  if (line.is_error === true || (typeof line.subtype === 'string' && line.subtype !== 'success')) {
    const errors = Array.isArray(line.errors) ? line.errors.map(String).join('; ') : '';
    events.push({ type: 'result', text, error: errors || text || `Claude Code ended with ${String(line.subtype)}` });
  } else events.push({ type: 'result', text });
  return events;
}

import type { HarnessDialect, HarnessEvent } from './harness-dialect.ts';

/** The agent cadre defines for its runs in opencode's configuration. */
const agentName = 'cadre';

/**
 * opencode (`opencode run --format json`): the task as its message, events as JSON Lines. cadre
 * adds an agent of its own to opencode's configuration (`OPENCODE_CONFIG_CONTENT`, merged over
 * the user's and the project's): the agent's body as its prompt, the turn cap as its `steps`, and
 * its permissions from cadre's rules (it cannot ask while it runs: `edit` and `bash` are allowed
 * where cadre allows writing and running commands, else denied). `--session` resumes.
 */
export const opencodeDialect: HarnessDialect = {
  name: 'opencode',
  program: 'opencode',
  install: 'npm install -g opencode-ai',
  asksMidRun: false,

  invocation(start) {
    const decision = (allowed: boolean) => (allowed ? 'allow' : 'deny');
    const config = {
      agent: {
        [agentName]: {
          mode: 'primary',
          ...(start.system.trim() === '' ? {} : { prompt: start.system }),
          steps: start.maxTurns,
          permission: { edit: decision(start.allowed.write), bash: decision(start.allowed.exec), webfetch: decision(start.allowed.network) },
        },
      },
    };
    const args = ['run', '--format', 'json', '--agent', agentName];
    if (start.model !== undefined) args.push('--model', start.model);
    if (start.sessionId !== undefined) args.push('--session', start.sessionId);
    args.push('--', start.prompt);
    return { args, env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config), OPENCODE_DISABLE_AUTOUPDATE: '1' }, interactive: false };
  },

  createParser() {
    let session: string | undefined;
    const totals = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0 };
    return (line) => {
      const events: HarnessEvent[] = [];
      if (session === undefined && typeof line.sessionID === 'string') {
        session = line.sessionID;
        events.push({ type: 'session', id: session });
      }
      const part = (line.part ?? {}) as Record<string, unknown>;
      switch (line.type) {
        case 'text':
          if (typeof part.text === 'string') events.push({ type: 'text', text: part.text });
          break;
        case 'tool_use': {
          const state = (part.state ?? {}) as Record<string, unknown>;
          const id = String(part.callID ?? part.id);
          events.push({ type: 'tool-call', id, name: String(part.tool), input: state.input ?? {} });
          if (state.status === 'completed' || state.status === 'error') {
            const output = typeof state.output === 'string' ? state.output : typeof state.error === 'string' ? state.error : '';
            const exit = (state.metadata as { exit?: unknown } | undefined)?.exit;
            events.push({ type: 'tool-result', id, output, ok: state.status === 'completed' && (exit === undefined || exit === 0) });
          }
          break;
        }
        case 'step_finish': {
          const tokens = (part.tokens ?? {}) as { input?: number; output?: number; cache?: { read?: number; write?: number } };
          const read = tokens.cache?.read ?? 0;
          const write = tokens.cache?.write ?? 0;
          totals.input_tokens += (tokens.input ?? 0) + read + write;
          totals.output_tokens += tokens.output ?? 0;
          totals.cache_read_tokens += read;
          totals.cache_write_tokens += write;
          if (typeof part.cost === 'number') totals.cost_usd += part.cost;
          events.push({ type: 'usage', ...totals });
          // A step that called no tool is its answer.
          if (part.reason !== 'tool-calls') events.push({ type: 'result', text: '' });
          break;
        }
        case 'error': {
          const error = line.error as { message?: unknown; data?: { message?: unknown } } | undefined;
          const message = error?.data?.message ?? error?.message;
          events.push({ type: 'result', text: '', error: typeof message === 'string' ? message : JSON.stringify(line.error ?? 'an error') });
          break;
        }
      }
      return events;
    };
  },

  toolName: (name) =>
    ({ bash: 'bash', read: 'read_file', write: 'write_file', edit: 'edit_file', grep: 'grep', glob: 'list_files', list: 'list_files' })[name] ?? name,
};

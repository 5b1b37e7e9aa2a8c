import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HarnessDialect, HarnessEvent } from './harness-dialect.ts';

/**
 * Codex (`codex exec --json`): the task as its prompt, events as JSON Lines on stdout. It cannot
 * ask mid-run, so it runs with `approval_policy = "never"` and the sandbox cadre's rules allow
 * (`read-only`, or `workspace-write` where cadre allows writing and running commands), set with
 * `-c` overrides, which `codex exec resume` takes too (it takes no `--sandbox`) and which win over
 * its own configuration. The agent's body goes in as `developer_instructions`.
 */
export const codexDialect: HarnessDialect = {
  name: 'codex',
  program: 'codex',
  install: 'npm install -g @openai/codex',
  asksMidRun: false,

  async invocation(start) {
    const sandbox = start.allowed.write || start.allowed.exec ? 'workspace-write' : 'read-only';
    const args = ['exec'];
    if (start.sessionId !== undefined) args.push('resume');
    args.push('--json', '--skip-git-repo-check', '-c', 'approval_policy="never"', '-c', `sandbox_mode="${sandbox}"`);
    if (sandbox === 'workspace-write') args.push('-c', `sandbox_workspace_write.network_access=${start.allowed.network}`);
    if (start.system.trim() !== '') args.push('-c', `developer_instructions=${JSON.stringify(start.system)}`);
    if (start.model !== undefined) args.push('--model', start.model);
    if (start.outputSchema !== undefined) {
      const file = join(start.scratch, 'output-schema.json');
      await writeFile(file, JSON.stringify(start.outputSchema));
      args.push('--output-schema', file);
    }
    if (start.sessionId !== undefined) args.push(start.sessionId);
    // After `--`, a task that starts with '-' is still the prompt.
    args.push('--', start.prompt);
    return { args, interactive: false };
  },

  createParser() {
    // Calls announced by `item.started`: their end only brings the result.
    const startedIds = new Set<string>();
    return (line) => {
      switch (line.type) {
        case 'thread.started':
          return typeof line.thread_id === 'string' ? [{ type: 'session', id: line.thread_id }] : [];
        case 'item.started':
          return itemStarted(line.item as Record<string, unknown> | undefined, startedIds);
        case 'item.completed':
          return itemCompleted(line.item as Record<string, unknown> | undefined, startedIds);
        case 'turn.completed': {
          const usage = (line.usage ?? {}) as Record<string, number | undefined>;
          return [
            {
              type: 'usage',
              input_tokens: usage.input_tokens ?? 0,
              output_tokens: usage.output_tokens ?? 0,
              cache_read_tokens: usage.cached_input_tokens ?? 0,
              cache_write_tokens: usage.cache_write_input_tokens ?? 0,
            },
            { type: 'result', text: '' },
          ];
        }
        case 'turn.failed': {
          const error = line.error as { message?: unknown } | undefined;
          return [{ type: 'result', text: '', error: typeof error?.message === 'string' ? error.message : 'the turn failed' }];
        }
        default:
          return [];
      }
    };
  },

  toolName: (name) => (name === 'shell' ? 'bash' : name === 'apply_patch' ? 'edit_file' : name),
};

/** The call an item stands for: a command, a patch, an MCP tool, a web search. */
function callOf(item: Record<string, unknown>): { name: string; input: Record<string, unknown> } | undefined {
  switch (item.type) {
    case 'command_execution':
      return { name: 'shell', input: { command: item.command } };
    case 'file_change':
      return { name: 'apply_patch', input: { path: changedPaths(item).join(', ') } };
    case 'mcp_tool_call':
      return { name: `${String(item.server)}.${String(item.tool)}`, input: (item.arguments as Record<string, unknown>) ?? {} };
    case 'web_search':
      return { name: 'web_search', input: { query: item.query } };
    default:
      return undefined;
  }
}

function itemStarted(item: Record<string, unknown> | undefined, startedIds: Set<string>): HarnessEvent[] {
  if (!item) return [];
  const call = callOf(item);
  if (!call) return [];
  startedIds.add(String(item.id));
  return [{ type: 'tool-call', id: String(item.id), ...call }];
}

function itemCompleted(item: Record<string, unknown> | undefined, startedIds: Set<string>): HarnessEvent[] {
  if (!item) return [];
  if (item.type === 'agent_message' && typeof item.text === 'string') return [{ type: 'text', text: item.text }];
  const call = callOf(item);
  if (!call) return [];
  const id = String(item.id);
  const events: HarnessEvent[] = startedIds.delete(id) ? [] : [{ type: 'tool-call', id, ...call }];
  events.push({ type: 'tool-result', id, output: outputOf(item), ok: succeeded(item) });
  return events;
}

function changedPaths(item: Record<string, unknown>): string[] {
  return Array.isArray(item.changes) ? item.changes.map((change: { path?: unknown }) => String(change?.path ?? '')).filter(Boolean) : [];
}

function outputOf(item: Record<string, unknown>): string {
  if (item.type === 'command_execution') return typeof item.aggregated_output === 'string' ? item.aggregated_output : '';
  if (item.type === 'file_change') return `${String(item.status)}: ${changedPaths(item).join(', ')}`;
  if (item.type === 'mcp_tool_call') return JSON.stringify(item.result ?? item.error ?? null);
  return String(item.status ?? '');
}

function succeeded(item: Record<string, unknown>): boolean {
  if (item.type === 'command_execution') return item.exit_code === 0;
  return item.status !== 'failed';
}

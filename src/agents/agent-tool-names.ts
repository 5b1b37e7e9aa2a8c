/**
 * Tool names of Claude Code (`Read`, `Grep`, ...) and opencode (`read`, `glob`, ...) and the
 * cadre tool each stands for, so their agent files work unchanged. Names not listed here pass
 * through as they are (cadre's own names, `mcp__server__tool`, tools added later).
 */
export const agentToolNames: Readonly<Record<string, string>> = Object.freeze({
  Read: 'read_file',
  NotebookRead: 'read_file',
  Grep: 'grep',
  Glob: 'list_files',
  LS: 'list_files',
  Write: 'write_file',
  Edit: 'edit_file',
  MultiEdit: 'edit_file',
  Bash: 'bash',
  // Claude Code's message to a running or stopped agent: cadre's delegation tool of the same job.
  SendMessage: 'agent_send',
  read: 'read_file',
  grep: 'grep',
  glob: 'list_files',
  list: 'list_files',
  write: 'write_file',
  edit: 'edit_file',
  multiedit: 'edit_file',
  patch: 'edit_file',
  bash: 'bash',
});

/**
 * Names for delegating to another agent (`Task`, `Agent`, opencode's `task`) and for talking to a
 * run (`SendMessage`, read as `agent_send`): cadre gives every agent its delegation tools itself
 * (up to `limits.maxDepth`), so a file listing them loses nothing.
 */
export const delegationToolAliases: ReadonlySet<string> = new Set(['Task', 'Agent', 'task', 'agent_send']);

/**
 * Tools of Claude Code and opencode that cadre has no equivalent of. A file may list them: the
 * agent runs without them, and `cadre agents` says so once for the file.
 */
export const toolsWithoutEquivalent: ReadonlySet<string> = new Set([
  'WebFetch',
  'WebSearch',
  'TodoWrite',
  'TodoRead',
  'NotebookEdit',
  'BashOutput',
  'KillShell',
  'KillBash',
  'SlashCommand',
  'Skill',
  'ExitPlanMode',
  'AskUserQuestion',
  'ListMcpResourcesTool',
  'ReadMcpResourceTool',
  'TaskCreate',
  'TaskList',
  'TaskGet',
  'TaskUpdate',
  'TaskOutput',
  'TaskStop',
  'TeamCreate',
  'TeamDelete',
  'webfetch',
  'websearch',
  'todowrite',
  'todoread',
  'skill',
  'lsp',
]);

/** The read tools: what `permissionMode: plan` keeps among the workspace tools. */
export const readToolNames: readonly string[] = Object.freeze(['read_file', 'list_files', 'grep']);

/**
 * The cadre name a tool entry of an agent file stands for: `Read` is `read_file`, `Bash(git *)`
 * is `bash` (a pattern in a tool list grants nothing; permission rules decide), other names stay.
 * @example cadreToolName('Bash(npm test:*)') // 'bash'
 */
export function cadreToolName(entry: string): string {
  const open = entry.indexOf('(');
  const name = (open > 0 && entry.endsWith(')') ? entry.slice(0, open) : entry).trim();
  return Object.hasOwn(agentToolNames, name) ? agentToolNames[name] : name;
}

/**
 * The cadre tool names an agent file's tool entries stand for, deduplicated in order; the
 * delegation names (`Task`) are left out, since every agent has delegation tools anyway.
 * @example mapAgentToolNames(['Read', 'Grep', 'Glob', 'LS', 'Task']) // ['read_file', 'grep', 'list_files']
 */
export function mapAgentToolNames(entries: readonly string[]): string[] {
  const names: string[] = [];
  for (const entry of entries) {
    const name = cadreToolName(entry);
    if (name !== '' && !delegationToolAliases.has(name) && !names.includes(name)) names.push(name);
  }
  return names;
}

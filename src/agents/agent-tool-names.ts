/**
 * Tool names of Claude Code (`Read`, `Grep`, ...) and opencode (`read`, `glob`, ...) and the
 * cadre tool each stands for, so their agent files work unchanged. Names not listed here pass
 * through as they are (cadre's own names, `mcp__server__tool`, tools added later).
 */
export const agentToolNames: Readonly<Record<string, string>> = Object.freeze({
  Read: 'read_file',
  Grep: 'grep',
  Glob: 'list_files',
  LS: 'list_files',
  Write: 'write_file',
  Edit: 'edit_file',
  MultiEdit: 'edit_file',
  Bash: 'bash',
  read: 'read_file',
  glob: 'list_files',
  list: 'list_files',
  write: 'write_file',
  edit: 'edit_file',
  patch: 'edit_file',
});

/** Tools of Claude Code and opencode that cadre has no equivalent of: left out, with a warning. */
export const toolsWithoutEquivalent: ReadonlySet<string> = new Set([
  'Task', 'Agent', 'WebFetch', 'WebSearch', 'TodoWrite', 'TodoRead', 'NotebookEdit', 'NotebookRead', 'BashOutput', 'KillShell', 'KillBash',
  'SlashCommand', 'Skill', 'ExitPlanMode', 'AskUserQuestion', 'webfetch', 'websearch', 'todowrite', 'todoread', 'task', 'skill', 'lsp',
]);

/** The read tools built-in agents get, and opencode agents that only turn tools off start from. */
export const readToolNames: readonly string[] = Object.freeze(['read_file', 'list_files', 'grep']);

/**
 * The cadre tool names an agent file's `tools` stands for, deduplicated in order, and one warning
 * per tool left out because cadre has no equivalent.
 * @example mapAgentToolNames(['Read', 'Grep', 'Glob', 'LS']) // { tools: ['read_file', 'grep', 'list_files'], warnings: [] }
 */
export function mapAgentToolNames(names: readonly string[]): { tools: string[]; warnings: string[] } {
  const tools: string[] = [];
  const warnings: string[] = [];
  for (const name of names) {
    if (toolsWithoutEquivalent.has(name)) {
      warnings.push(`tools: '${name}' has no cadre equivalent and is left out`);
      continue;
    }
    const tool = Object.hasOwn(agentToolNames, name) ? agentToolNames[name] : name;
    if (!tools.includes(tool)) tools.push(tool);
  }
  return { tools, warnings };
}

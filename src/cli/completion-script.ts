import type { Command, Option } from 'commander';

/** The shells `cadre completion` writes scripts for. */
export type Shell = 'bash' | 'zsh' | 'fish';

interface FlagInfo {
  names: string[];
  description: string;
  takesValue: boolean;
  choices: string[];
  /** What a value names, to complete it as a file or a directory. */
  value: 'file' | 'directory' | 'other';
}

interface CommandInfo {
  name: string;
  description: string;
  flags: FlagInfo[];
  /** Choices of the first argument, like bash/zsh/fish for `completion`. */
  argumentChoices: string[];
}

const directoryFlags = new Set(['--agents']);
const fileFlags = new Set(['--db', '--config', '--output']);

function flagInfo(option: Option): FlagInfo {
  const names = [option.short, option.long].filter((name): name is string => name !== undefined);
  const long = option.long ?? '';
  return {
    names,
    description: option.description.replace(/\s+/g, ' '),
    takesValue: option.required || option.optional,
    choices: option.argChoices ?? [],
    value: directoryFlags.has(long) ? 'directory' : fileFlags.has(long) ? 'file' : 'other',
  };
}

function visibleFlags(command: Command): FlagInfo[] {
  return [
    ...command.options.filter((option) => !option.hidden).map(flagInfo),
    { names: ['-h', '--help'], description: 'show help', takesValue: false, choices: [], value: 'other' },
  ];
}

function uniqueFlags(flags: FlagInfo[]): FlagInfo[] {
  const seen = new Set<string>();
  return flags.filter((flag) => {
    const key = flag.names.join(' ');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function describeProgram(program: Command): { globals: FlagInfo[]; commands: CommandInfo[] } {
  const commands = program.commands
    .filter((command) => !(command as Command & { _hidden?: boolean })._hidden)
    .map((command) => ({
      name: command.name(),
      description: command.description().replace(/\s+/g, ' '),
      // A command with subcommands (`worktree diff|merge|remove`) completes their names and flags.
      flags: uniqueFlags([command, ...command.commands].flatMap(visibleFlags)).filter((flag) => !flag.names.includes('-h')),
      argumentChoices: command.registeredArguments[0]?.argChoices ?? command.commands.map((subcommand) => subcommand.name()),
    }));
  return { globals: visibleFlags(program), commands };
}

function bashScript(program: Command): string {
  const { globals, commands } = describeProgram(program);
  const all = [...globals, ...commands.flatMap((command) => command.flags)];
  const valueCase = (kind: FlagInfo['value']) =>
    [...new Set(all.filter((flag) => flag.takesValue && flag.value === kind && flag.choices.length === 0).flatMap((flag) => flag.names))].join('|');
  const choiceCases = all
    .filter((flag) => flag.choices.length > 0)
    .map((flag) => `    ${flag.names.join('|')}) COMPREPLY=($(compgen -W "${flag.choices.join(' ')}" -- "$cur")); return 0 ;;`);
  const otherValues = valueCase('other');
  const commandCases = commands.map((command) => {
    const words = [...command.flags.flatMap((flag) => flag.names), ...command.argumentChoices].join(' ');
    return `    ${command.name}) words="${words}" ;;`;
  });
  return `# bash completion for cadre. Load it with: source <(cadre completion bash)
_cadre_completion() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local commands="${commands.map((command) => command.name).join(' ')}"
  local globals="${globals.flatMap((flag) => flag.names).join(' ')}"
  local command="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ -z "$command" && " $commands " == *" \${COMP_WORDS[i]} "* ]]; then command="\${COMP_WORDS[i]}"; fi
  done
  case "$prev" in
    ${valueCase('file')}) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    ${valueCase('directory')}) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
${choiceCases.join('\n')}
${otherValues === '' ? '' : `    ${otherValues}) COMPREPLY=(); return 0 ;;`}
  esac
  local words=""
  case "$command" in
${commandCases.join('\n')}
    "") if [[ "$cur" != -* ]]; then COMPREPLY=($(compgen -W "$commands" -- "$cur")); return 0; fi ;;
  esac
  COMPREPLY=($(compgen -W "$words $globals" -- "$cur"))
}
complete -o default -F _cadre_completion cadre
`;
}

const zshText = (text: string) => text.replace(/[[\]]/g, '').replace(/'/g, "'\\''");

function zshFlag(flag: FlagInfo): string {
  const description = zshText(flag.description);
  const value = !flag.takesValue
    ? ''
    : flag.choices.length > 0
      ? `:value:(${flag.choices.join(' ')})`
      : flag.value === 'directory'
        ? ':directory:_files -/'
        : flag.value === 'file'
          ? ':file:_files'
          : ':value:';
  if (flag.names.length === 1) return `'${flag.names[0]}[${description}]${value}'`;
  return `'(${flag.names.join(' ')})'{${flag.names.join(',')}}'[${description}]${value}'`;
}

function zshScript(program: Command): string {
  const { globals, commands } = describeProgram(program);
  const describe = commands.map((command) => `    '${command.name}:${zshText(command.description).replace(/:/g, '\\:')}'`);
  const cases = commands.map((command) => {
    const specs = [...command.flags, ...globals.filter((flag) => !flag.names.includes('--version'))].map(zshFlag);
    if (command.argumentChoices.length > 0) specs.push(`'1:${command.name}:(${command.argumentChoices.join(' ')})'`);
    else specs.push("'*::argument:_files'");
    return `      ${command.name}) _arguments ${specs.join(' ')} ;;`;
  });
  return `#compdef cadre
# zsh completion for cadre. Save it as _cadre in a directory of $fpath, or: source <(cadre completion zsh)
_cadre() {
  local state line
  local -a commands
  commands=(
${describe.join('\n')}
  )
  _arguments -C ${globals.map(zshFlag).join(' ')} '1: :->command' '*:: :->argument'
  case $state in
    command) _describe 'command' commands ;;
    argument)
      case $line[1] in
${cases.join('\n')}
      esac ;;
  esac
}
if [[ "$funcstack[1]" == _cadre ]]; then _cadre "$@"; else compdef _cadre cadre; fi
`;
}

const fishText = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fishFlag(flag: FlagInfo, condition: string): string {
  const parts = ['complete -c cadre'];
  if (condition !== '') parts.push(`-n ${fishText(condition)}`);
  for (const name of flag.names) parts.push(name.startsWith('--') ? `-l ${name.slice(2)}` : `-s ${name.slice(1)}`);
  if (flag.takesValue) parts.push(flag.value === 'other' ? '-x' : '-r -F');
  if (flag.choices.length > 0) parts.push(`-a ${fishText(flag.choices.join(' '))}`);
  parts.push(`-d ${fishText(flag.description)}`);
  return parts.join(' ');
}

function fishScript(program: Command): string {
  const { globals, commands } = describeProgram(program);
  const lines = ['# fish completion for cadre. Save it as ~/.config/fish/completions/cadre.fish', 'complete -c cadre -f'];
  for (const command of commands) lines.push(`complete -c cadre -n __fish_use_subcommand -a ${command.name} -d ${fishText(command.description)}`);
  for (const flag of globals) lines.push(fishFlag(flag, ''));
  for (const command of commands) {
    const condition = `__fish_seen_subcommand_from ${command.name}`;
    for (const flag of command.flags) lines.push(fishFlag(flag, condition));
    if (command.argumentChoices.length > 0) lines.push(`complete -c cadre -n ${fishText(condition)} -a ${fishText(command.argumentChoices.join(' '))}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The completion script of `cadre completion SHELL`, made from the program itself, so every
 * command and flag it registers completes (and file and directory values complete as paths).
 */
export function completionScript(shell: Shell, program: Command): string {
  if (shell === 'zsh') return zshScript(program);
  if (shell === 'fish') return fishScript(program);
  return bashScript(program);
}

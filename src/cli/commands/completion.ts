import type { Command } from 'commander';
import { writeLine, type CliContext, type ExitCode } from '../cli-context.ts';
import type { StoreFlags } from '../command-options.ts';
import type { Shell } from '../completion-script.ts';

/** Registers `cadre completion bash|zsh|fish`: a script that completes cadre's commands and flags. */
export function registerCompletion(program: Command, context: CliContext, exit: ExitCode): void {
  const completion = program.command('completion');
  completion
    .description('print a shell completion script (bash: source <(cadre completion bash))')
    .addArgument(completion.createArgument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      [
        '',
        'Install:',
        "  bash  echo 'source <(cadre completion bash)' >> ~/.bashrc",
        '  zsh   cadre completion zsh > "${fpath[1]}/_cadre"   (or: source <(cadre completion zsh) in ~/.zshrc)',
        '  fish  cadre completion fish > ~/.config/fish/completions/cadre.fish',
      ].join('\n'),
    )
    .action(async (shell: Shell, _flags: StoreFlags, command: Command) => {
      const { completionScript } = await import('../completion-script.ts');
      const script = completionScript(shell, program);
      if (command.optsWithGlobals<StoreFlags>().json) writeLine(context.stdout, JSON.stringify({ shell, script }));
      else context.stdout.write(script);
      exit.code = 0;
    });
}

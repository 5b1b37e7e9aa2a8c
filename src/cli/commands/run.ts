import type { Command } from 'commander';
import { approvalsFlagChoices } from '../approval-mode.ts';
import type { CliContext, ExitCode } from '../cli-context.ts';
import { collect } from '../command-options.ts';
import type { RunFlags } from '../run.ts';

/**
 * `--approvals <mode>`: its values are known to help and shell completion, while `approvalModeOf`
 * checks them (commander's own check would replace that error's clear message).
 */
function approvalsOption(program: Command) {
  const option = program.createOption(
    '--approvals <mode>',
    'asks: ask (prompt here; default on a terminal), wait (for cadre approve or the dashboard), deny (default otherwise)',
  );
  option.argChoices = [...approvalsFlagChoices];
  return option;
}

/** Registers `cadre run`; the command itself (and the AI SDK) is loaded when it runs. */
export function registerRun(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('run')
    .description('send a prompt to the primary agent; return when it and every run it started are done')
    .argument('[prompt]', 'what to do; read from stdin when absent')
    .option('--agent <name>', 'the primary agent (default: main)')
    .option('--agents <dir>', 'also load agent files from this directory (repeatable)', collect)
    .option('--model <spec>', 'model spec provider:model-id, e.g. anthropic:claude-sonnet-4-5 (or CADRE_MODEL)')
    .option('--base-url <url>', 'base URL of the model API, for openai-compatible: (or CADRE_BASE_URL)')
    .option('--session <id>', 'continue this session')
    .option('-c, --continue', 'continue the most recent session')
    .option('--allow <rule>', "allow tool calls this rule matches, e.g. 'bash(npm test*)' (repeatable)", collect)
    .option('--deny <rule>', 'deny tool calls this rule matches, e.g. network (repeatable)', collect)
    .option('--yes', 'approve every ask for approval')
    .addOption(approvalsOption(program))
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  cadre run "Find where sessions are stored and summarize"',
        '  cadre run --agent code-reviewer "Review the last commit"     # an agent of .claude/agents/',
        '  git diff | cadre run --model anthropic:claude-sonnet-4-5      # the prompt from stdin',
        '  cadre run -c "Now write the tests"                           # the most recent session goes on',
        '  cadre run --json "Survey src/" | jq -c .type                 # events as JSON Lines',
        '',
        'Under --json: events as JSON Lines on stdout, ending with a session-end line.',
      ].join('\n'),
    )
    .action(async (prompt: string | undefined, _flags: RunFlags, command: Command) => {
      const { runCommand } = await import('../run.ts');
      exit.code = await runCommand(context, prompt, command.optsWithGlobals<RunFlags>());
    });
}

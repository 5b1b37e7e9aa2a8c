import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import { collect, type StoreFlags } from '../command-options.ts';
import type { WorkflowRunFlags } from '../workflow.ts';

/** Registers `cadre workflow run|show|resume`; the commands themselves are loaded when they run. */
export function registerWorkflow(program: Command, context: CliContext, exit: ExitCode): void {
  const workflow = program.command('workflow').description('run, show and resume workflows: durable scripts of runs (docs/workflows.md)');
  const runtimeOptions = (command: Command) =>
    command
      .option('--agents <dir>', 'also load agent files from this directory (repeatable)', collect)
      .option('--model <spec>', 'model spec provider:model-id, e.g. anthropic:claude-sonnet-4-5 (or CADRE_MODEL)')
      .option('--base-url <url>', 'base URL of the model API, for openai-compatible: (or CADRE_BASE_URL)')
      .option('--allow <rule>', "allow tool calls this rule matches, e.g. 'bash(npm test*)' (repeatable)", collect)
      .option('--deny <rule>', 'deny tool calls this rule matches, e.g. network (repeatable)', collect)
      .option('--yes', 'approve every ask for approval (otherwise asks are denied)')
      .option('--approvals <mode>', 'asks of its runs: wait (for cadre approve or the dashboard) or deny (the default)');
  runtimeOptions(
    workflow
      .command('run')
      .description('run a workflow file (an ES module whose default export is (w, input) => ...), with live progress')
      .argument('<file>', 'the workflow file (.js, .mjs; .ts where Node strips types)')
      .option('--input <json>', 'the input, as JSON')
      .option('--background', 'start it in a process of its own and print its id'),
  ).action(async (file: string, _flags: WorkflowRunFlags, command: Command) => {
    const { workflowRunCommand } = await import('../workflow.ts');
    exit.code = await workflowRunCommand(context, file, command.optsWithGlobals<WorkflowRunFlags>());
  });
  workflow
    .command('show')
    .description('a workflow: its status, phases, log, runs and output')
    .argument('<id>', 'a workflow id (wf_...)')
    .action(async (id: string, _flags: StoreFlags, command: Command) => {
      const { workflowShowCommand } = await import('../workflow.ts');
      exit.code = await workflowShowCommand(context, id, command.optsWithGlobals());
    });
  runtimeOptions(
    workflow
      .command('resume')
      .description('replay a workflow whose process died: finished runs are not run again, runs under way are resumed')
      .argument('<id>', 'a workflow id (wf_...)'),
  ).action(async (id: string, _flags: WorkflowRunFlags, command: Command) => {
    const { workflowResumeCommand } = await import('../workflow.ts');
    exit.code = await workflowResumeCommand(context, id, command.optsWithGlobals<WorkflowRunFlags>());
  });
}

/** Registers `cadre workflows`. */
export function registerWorkflows(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('workflows')
    .description('list the latest workflows, newest first (--json: an array of workflow records with their runs)')
    .option('--limit <n>', 'how many (default 20)')
    .action(async (_flags: StoreFlags, command: Command) => {
      const { workflowsCommand } = await import('../workflow.ts');
      exit.code = await workflowsCommand(context, command.optsWithGlobals());
    });
}

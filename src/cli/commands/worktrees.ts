import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import type { StoreFlags } from '../command-options.ts';

/** Registers `cadre worktrees` and `cadre worktree diff|merge|remove`; the commands are loaded when they run. */
export function registerWorktrees(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('worktrees')
    .description("list runs' own git worktrees (isolation: worktree): run, branch, status, changes")
    .action(async (_flags: StoreFlags, command: Command) => {
      const { worktreesCommand } = await import('../worktrees.ts');
      exit.code = await worktreesCommand(context, command.optsWithGlobals());
    });
  const worktree = program.command('worktree').description("a run's git worktree: diff, merge or remove it");
  worktree
    .command('diff')
    .description('what the run changed against its base')
    .argument('<run_id>', 'the run')
    .action(async (runId: string, _flags: StoreFlags, command: Command) => {
      const { worktreeDiffCommand } = await import('../worktrees.ts');
      exit.code = await worktreeDiffCommand(context, runId, command.optsWithGlobals());
    });
  worktree
    .command('merge')
    .description("merge the run's branch into the workspace's current branch; a conflict changes nothing (exit 1)")
    .argument('<run_id>', 'the run')
    .option('--squash', 'one plain commit of its changes instead of a merge commit; the branch is kept')
    .action(async (runId: string, _flags: StoreFlags, command: Command) => {
      const { worktreeMergeCommand } = await import('../worktrees.ts');
      exit.code = await worktreeMergeCommand(context, runId, command.optsWithGlobals());
    });
  worktree
    .command('remove')
    .description('remove the worktree and its branch; refuses changes not merged without --force')
    .argument('<run_id>', 'the run')
    .option('--force', 'remove it even with changes that are not merged')
    .action(async (runId: string, _flags: StoreFlags, command: Command) => {
      const { worktreeRemoveCommand } = await import('../worktrees.ts');
      exit.code = await worktreeRemoveCommand(context, runId, command.optsWithGlobals());
    });
}

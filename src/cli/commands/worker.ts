import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import { collect } from '../command-options.ts';
import type { WorkerFlags } from '../worker.ts';

const helpAfter = `
A worker carries out runs that hosts (cadre run, serve, mcp) put on the queue: start it in the
workspace those runs work in (it refuses runs of other workspaces), with the hosts' database
(Postgres, or a SQLite file on this machine) and queue. Its runs stop within 2 s of a stop from
anywhere; a worker that dies has its runs resumed by another (or ended abandoned).

Examples:
  cadre worker --db postgres://cadre@db:5432/cadre --queue redis://redis:6379 --concurrency 25
  CADRE_DB=postgres://... CADRE_QUEUE=redis://... cadre worker`;

/** Registers `cadre worker`; the command itself (BullMQ, the AI SDK) is loaded when it runs. */
export function registerWorker(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('worker')
    .description('carry out runs taken from the queue (queue: redis://...), for the workspace it starts in')
    .option('--queue <url>', 'the queue: a redis:// URL, optionally with ?prefix=NAME (or CADRE_QUEUE, or queue in the config)')
    .option('--concurrency <n>', 'runs carried out at once (default 10)')
    .option('--agents <dir>', 'also load agent files from this directory (repeatable)', collect)
    .option('--model <spec>', 'model spec for sessions that name none (or CADRE_MODEL)')
    .option('--base-url <url>', 'base URL of the model API, for openai-compatible: (or CADRE_BASE_URL)')
    .addHelpText('after', helpAfter)
    .action(async (_flags: WorkerFlags, command: Command) => {
      const { workerCommand } = await import('../worker.ts');
      exit.code = await workerCommand(context, command.optsWithGlobals<WorkerFlags>());
    });
}

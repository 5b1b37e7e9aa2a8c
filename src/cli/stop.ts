import type { Command } from 'commander';
import { ConfigError } from '../errors/config-error.ts';
import { ownerIsGone } from '../util/owner-liveness.ts';
import { isFinished, type RunRecord } from '../store/records.ts';
import { writeLine, type CliContext, type ExitCode } from './cli-context.ts';
import type { StoreFlags } from './command-options.ts';
import { openRuntime } from './open-runtime.ts';

function line(run: RunRecord): string {
  return `${run.id}  ${run.agent}  ${run.status}`;
}

function stillActive(run: RunRecord): string {
  if (ownerIsGone(run.lease_owner)) {
    return `cadre: ${run.id} is still ${run.status}: the process that ran it is gone, and its lease lasts until ${run.lease_expires_at}; stop it again after that.`;
  }
  return `cadre: ${run.id} is still ${run.status}: its process was asked to stop it and has not yet.`;
}

/**
 * `cadre stop RUN_ID|SESSION_ID`: a person's stop, from any process. A run (and the runs it
 * started) ends `canceled_by_user`: the process that owns it is asked through the store and stops
 * it within about half a second, or this process takes over when that owner is gone. A session
 * stops its current turn and every active run. Exit 0 when everything asked for has stopped.
 */
export async function stopCommand(context: CliContext, id: string, flags: StoreFlags): Promise<number> {
  const { cadre, store, close } = await openRuntime({ context, flags, requireModel: false, createDatabase: false });
  try {
    const run = await store.getRun(id);
    const session = run ? null : await store.getSession(id);
    if (!run && !session) throw new ConfigError(`No run or session '${id}'. List them with: cadre runs, cadre sessions`);
    if (run && isFinished(run.status)) {
      writeLine(context.stdout, `${line(run)} (already finished; nothing to stop)`);
      return 0;
    }
    if (run || session!.parent_run_id !== null) {
      const stopped = await cadre.stopRun(run?.id ?? session!.parent_run_id!, { reason: 'Stopped by a person (cadre stop).' });
      if (!stopped) throw new ConfigError(`No run or session '${id}'.`);
      writeLine(context.stdout, line(stopped));
      if (isFinished(stopped.status)) return 0;
      writeLine(context.stderr, stillActive(stopped));
      return 1;
    }
    const stopped = await cadre.stopSession(session!.id);
    for (const each of stopped) writeLine(context.stdout, line(each));
    const still = await store.listRuns({ parent_session_id: session!.id, statuses: ['queued', 'running'] });
    for (const each of still) writeLine(context.stderr, stillActive(each));
    writeLine(context.stdout, `${session!.id}  stopped${stopped.length === 0 ? ' (no active runs)' : ''}`);
    return still.length === 0 ? 0 : 1;
  } finally {
    await close();
  }
}

/** Registers `cadre stop`. */
export function registerStop(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('stop')
    .description("stop a run (and the runs it started) or a whole session: canceled_by_user, from any process")
    .argument('<id>', 'a run id or a session id')
    .option('--db <path>', 'the database (default ./.cadre/cadre.db, or CADRE_DB)')
    .option('--config <file>', 'config file (default ./cadre.config.json)')
    .action(async (id: string, _flags: StoreFlags, command: Command) => {
      exit.code = await stopCommand(context, id, command.optsWithGlobals());
    });
}

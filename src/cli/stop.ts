import { ConfigError } from '../errors/config-error.ts';
import { ownerIsGone } from '../util/owner-liveness.ts';
import { isFinished, type RunRecord } from '../store/records.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { StoreFlags } from './command-options.ts';
import { openRuntime } from './open-runtime.ts';
import { shortRunId, shortRunIdLength } from './run-lines.ts';
import type { Store } from '../store/store.ts';
import type { Cadre } from '../runtime/create-cadre.ts';

function line(run: RunRecord): string {
  return `${run.id}  ${run.agent}  ${run.status}`;
}

function stillActive(run: RunRecord): string {
  if (ownerIsGone(run.lease_owner)) {
    return `cadre: ${run.id} is still ${run.status}: the process that ran it is gone, and its lease lasts until ${run.lease_expires_at}; stop it again after that.`;
  }
  return `cadre: ${run.id} is still ${run.status}: its process was asked to stop it and has not yet.`;
}

/** `cadre stop WF_ID`: the workflow and every run it has going end `canceled_by_user`. */
async function stopWorkflow(context: CliContext, cadre: Cadre, id: string, flags: StoreFlags): Promise<number> {
  const workflow = await cadre.stopWorkflow(id, 'Stopped by a person (cadre stop).');
  if (!workflow) throw new ConfigError(`No workflow '${id}'. List them with: cadre workflows`);
  const runs = await cadre.store.listRuns({ workflow_id: id, statuses: ['queued', 'running'] });
  if (flags.json)
    writeLine(context.stdout, JSON.stringify({ workflow: { id: workflow.id, status: workflow.status }, still_active: runs.map((run) => run.id) }, null, 2));
  else
    writeLine(
      context.stdout,
      `${workflow.id}  ${workflow.name}  ${workflow.status}${workflow.ended_at && workflow.status !== 'canceled_by_user' ? ' (already finished; nothing to stop)' : ''}`,
    );
  for (const run of runs) writeLine(context.stderr, stillActive(run));
  if (workflow.status === 'running') writeLine(context.stderr, `cadre: ${id} is still running: its process was asked to stop it and has not yet.`);
  return workflow.status === 'running' || runs.length > 0 ? 1 : 0;
}

/**
 * The active run whose id ends with `text`: the short id the live view shows (`R8T0V1`), any case.
 * Null when none does; a usage error when several do, naming them.
 */
export async function findActiveRunByShortId(store: Store, text: string): Promise<RunRecord | null> {
  const suffix = text.toUpperCase();
  if (!/^[0-9A-Z]+$/.test(suffix) || suffix.length < Math.min(4, shortRunIdLength)) return null;
  const active = await store.listRuns({ statuses: ['queued', 'running'] });
  const matches = active.filter((run) => run.id.toUpperCase().endsWith(suffix));
  if (matches.length > 1) {
    throw new ConfigError(`'${text}' is the end of ${matches.length} active runs (${matches.map((run) => run.id).join(', ')}); give more of the id.`);
  }
  return matches[0] ?? null;
}

/**
 * `cadre stop RUN_ID|SHORT_ID|SESSION_ID`: a person's stop, from any process. A run (and the runs it
 * started) ends `canceled_by_user`: the process that owns it is asked through the store and stops
 * it within about half a second, or this process takes over when that owner is gone. A session
 * stops its current turn and every active run. An active run is also found by the short id the
 * live view shows ({@link shortRunId}). Exit 0 when everything asked for has stopped.
 */
export async function stopCommand(context: CliContext, id: string, flags: StoreFlags): Promise<number> {
  const { cadre, store, close } = await openRuntime({ context, flags, requireModel: false, createDatabase: false });
  // Under --json the outcome is one document on stdout: { stopped, still_active, session? }.
  const report = { stopped: [] as RunRecord[], still_active: [] as RunRecord[], session: null as string | null };
  const stopped = (run: RunRecord, note = '') => {
    report.stopped.push(run);
    if (!flags.json) writeLine(context.stdout, `${line(run)}${note}`);
  };
  const still = (run: RunRecord) => {
    report.still_active.push(run);
    writeLine(context.stderr, stillActive(run));
  };
  try {
    if (id.startsWith('wf_')) return await stopWorkflow(context, cadre, id, flags);
    const run = (await store.getRun(id)) ?? ((await store.getSession(id)) ? null : await findActiveRunByShortId(store, id));
    const session = run ? null : await store.getSession(id);
    if (!run && !session) throw new ConfigError(`No run or session '${id}'. List them with: cadre runs, cadre sessions`);
    if (run && isFinished(run.status)) {
      stopped(run, ' (already finished; nothing to stop)');
      return 0;
    }
    if (run || session!.parent_run_id !== null) {
      const result = await cadre.stopRun(run?.id ?? session!.parent_run_id!, { reason: 'Stopped by a person (cadre stop).' });
      if (!result) throw new ConfigError(`No run or session '${id}'.`);
      if (isFinished(result.status)) {
        stopped(result);
        return 0;
      }
      if (!flags.json) writeLine(context.stdout, line(result));
      still(result);
      return 1;
    }
    report.session = session!.id;
    for (const each of await cadre.stopSession(session!.id)) stopped(each);
    for (const each of await store.listRuns({ parent_session_id: session!.id, statuses: ['queued', 'running'] })) still(each);
    if (!flags.json) writeLine(context.stdout, `${session!.id}  stopped${report.stopped.length === 0 ? ' (no active runs)' : ''}`);
    return report.still_active.length === 0 ? 0 : 1;
  } finally {
    await close();
    if (flags.json && (report.stopped.length > 0 || report.still_active.length > 0 || report.session !== null)) {
      writeLine(context.stdout, JSON.stringify(report, null, 2));
    }
  }
}

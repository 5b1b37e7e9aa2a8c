import type { SendToRunResult } from '../delegation/send-to-run.ts';
import { ConfigError } from '../errors/config-error.ts';
import { NotFoundError } from '../errors/not-found-error.ts';
import { EmptyRunMessageError } from '../runs/run-inbox.ts';
import { isFinished, type RunRecord } from '../store/records.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { SendFlags } from './commands/send.ts';
import { openRuntime } from './open-runtime.ts';
import { findActiveRunByShortId } from './stop.ts';

/** The line `cadre send` prints for what its message did. */
export function sentLine(sent: SendToRunResult): string {
  const head = `${sent.run.id}  ${sent.run.agent}  ${sent.run.status}`;
  switch (sent.kind) {
    case 'queued':
      return `${head}  message added to its task (it has not started)`;
    case 'running':
      if (!sent.reachable)
        return `${head}  message stored; the process that runs it cannot be reached now, so it waits and reaches the subagent when the run goes on`;
      return `${head}  message stored; ${sent.message.interrupt ? 'its work under way is interrupted and it goes on with the message' : 'it reaches the subagent before its next model call'}`;
    case 'follow-up':
      return `${head}  follow-up of ${sent.followed.id}, which had finished`;
  }
}

/**
 * `cadre send RUN_ID MESSAGE [--interrupt]`: a person's message to a run, from any process on the
 * same database (docs/talking-to-runs.md). The message is stored before this answers; the process
 * that runs the run hears of it as it hears of a stop. A finished run gets a follow-up run, carried
 * out here, and its result is printed. Exit 0 once the message is stored (and a follow-up finished),
 * 2 for an empty message or an unknown run (nothing changes).
 */
export async function sendCommand(context: CliContext, runId: string, message: string, flags: SendFlags): Promise<number> {
  if (message.trim() === '') throw new ConfigError(new EmptyRunMessageError().message);
  const { cadre, store, close } = await openRuntime({ context, flags, requireModel: false, createDatabase: false });
  try {
    const run = (await store.getRun(runId)) ?? (await findActiveRunByShortId(store, runId));
    if (!run) throw new ConfigError(`No run '${runId}'. List them with: cadre runs`);
    const sent = await cadre.sendToRun(run.id, message, { interrupt: flags.interrupt }).catch((error: unknown) => {
      if (NotFoundError.isInstance(error) || EmptyRunMessageError.isInstance(error)) throw new ConfigError(error.message, { cause: error });
      throw error;
    });
    if (flags.json) writeLine(context.stdout, JSON.stringify(sent, null, 2));
    else writeLine(context.stdout, sentLine(sent));
    if (sent.kind !== 'follow-up') return 0;
    // The follow-up runs in this process: its end is waited for here.
    const ended = await waitForEnd(cadre, sent.run);
    if (!flags.json) writeLine(context.stdout, `${ended.id}  ${ended.agent}  ${ended.status}\n\n${ended.result?.text ?? ended.error?.message ?? ''}`);
    return ended.status === 'completed' ? 0 : 1;
  } finally {
    await close();
  }
}

/** Resolves the run once it has finished (its `run-end`, heard on the runtime's events). */
async function waitForEnd(cadre: Awaited<ReturnType<typeof openRuntime>>['cadre'], run: RunRecord): Promise<RunRecord> {
  let unsubscribe = () => {};
  const ended = new Promise<void>((resolve) => {
    unsubscribe = cadre.subscribe((event) => {
      if (event.type === 'run-event' && event.run.id === run.id && isFinished(event.run.status)) resolve();
    });
  });
  try {
    const current = await cadre.store.getRun(run.id);
    if (!current || !isFinished(current.status)) await ended;
    return (await cadre.store.getRun(run.id)) ?? run;
  } finally {
    unsubscribe();
  }
}

import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { reportToDefaultLogger } from '../../logging/default-logger.ts';
import { systemNowMs, type NowMs } from '../../util/clock.ts';
import { quietErrors } from './quiet-errors.ts';
import { connectionOf, parseQueueUrl, runQueueName, type QueueSettings, type RunJobData, type RunJobResult } from './run-job.ts';

/** Options of {@link createRunWorker}. */
export interface RunWorkerOptions {
  /** The queue: a `redis://` URL (with an optional `?prefix=`), or its parsed settings. */
  queue: string | QueueSettings;
  /** This worker's name among the queue's workers (BullMQ's worker name; shown on jobs). */
  name: string;
  /** The workspaces this worker has: it takes only jobs whose workspace is one of them. */
  workspaces: readonly string[];
  /** Jobs carried out at once. @default 10 */
  concurrency?: number;
  /**
   * How long a job's lock lasts without renewal (BullMQ `lockDuration`); a worker that dies holds
   * its runs no longer than this before another worker may resume them. @default 10000
   */
  lockMs?: number;
  /** How often this worker looks for stalled jobs (BullMQ `stalledInterval`). @default 5000 */
  stalledIntervalMs?: number;
  /** Times a run may be resumed after its worker died before it is given up (BullMQ `maxStalledCount`). @default 2 */
  maxStalls?: number;
  /**
   * Carries out a run: resolves with its final status once it ended, rejects when the worker let
   * go of it before it ended (the job goes back to the queue). `signal` aborts when BullMQ takes
   * the job from this worker (lock lost) or the worker closes.
   */
  carryOut(data: RunJobData, signal: AbortSignal, job: RunJobControl): Promise<RunJobResult>;
  onError?: (error: unknown) => void;
  /** The clock in epoch milliseconds (when a job handed back is taken again, how often an error repeats). @default systemNowMs */
  nowMs?: NowMs;
}

/** What {@link RunWorkerOptions.carryOut} may do with the job it carries out. */
export interface RunJobControl {
  /** Records who holds the run now (see {@link RunJobData.holder}). */
  hold(owner: string): Promise<void>;
  /** Gives the job back to the queue, to be taken again in `ms`; never resolves (BullMQ's DelayedError). */
  later(ms: number): Promise<never>;
}

/** A running worker of the run queue. */
export interface RunWorker {
  readonly name: string;
  /** Resolves once the worker takes jobs. */
  ready(): Promise<void>;
  /** Stops taking jobs; `force` lets go of the running ones at once (they go back to the queue). */
  close(force?: boolean): Promise<void>;
}

/**
 * A BullMQ worker of cadre's run queue. Each job is one run: the worker checks it has the run's
 * workspace, then carries the run out. A job whose workspace it lacks goes back to the queue for
 * another worker (BullMQ's delayed jobs, a quarter second later); once every connected worker has
 * refused it, the job fails with a message saying no worker has that workspace, and the host ends
 * the run `failed` with it. Locks, their renewal and the recovery of stalled jobs (a worker killed
 * mid-run) are BullMQ's own.
 */
export function createRunWorker(options: RunWorkerOptions): RunWorker {
  const settings = typeof options.queue === 'string' ? parseQueueUrl(options.queue) : options.queue;
  const nowMs = options.nowMs ?? systemNowMs;
  const report = quietErrors(options.onError ?? reportToDefaultLogger, undefined, nowMs);
  const workspaces = new Set(options.workspaces.map(canonicalPath));
  let queue: Queue<RunJobData, RunJobResult> | undefined;
  const queueOf = () => (queue ??= new Queue<RunJobData, RunJobResult>(runQueueName, { connection: connectionOf(settings), prefix: settings.prefix }));

  /** The names of the workers connected to the queue now. */
  async function liveWorkers(): Promise<Set<string>> {
    const clients = await queueOf().getWorkers();
    return new Set(clients.map((client) => String(client.rawname ?? '').split(':w:')[1]).filter((name): name is string => name !== undefined && name !== ''));
  }

  async function handBack(job: Job<RunJobData, RunJobResult>, token: string | undefined): Promise<never> {
    const refused = [...new Set([...(job.data.refused_by ?? []), options.name])];
    await job.updateData({ ...job.data, refused_by: refused });
    const live = await liveWorkers();
    live.add(options.name);
    if ([...live].every((name) => refused.includes(name))) {
      throw new UnrecoverableError(
        `No cadre worker has the workspace ${job.data.workspace} (${live.size} connected worker${live.size === 1 ? '' : 's'} refused the run); start one there with: cadre worker`,
      );
    }
    await job.moveToDelayed(nowMs() + 250, token);
    throw new DelayedError();
  }

  const worker = new Worker<RunJobData, RunJobResult>(
    runQueueName,
    async (job, token, signal) => {
      if (!workspaces.has(canonicalPath(job.data.workspace))) return handBack(job, token);
      const control: RunJobControl = {
        hold: (owner) => job.updateData({ ...job.data, holder: owner }),
        async later(ms) {
          await job.moveToDelayed(nowMs() + ms, token);
          throw new DelayedError();
        },
      };
      return options.carryOut(job.data, signal ?? new AbortController().signal, control);
    },
    {
      connection: connectionOf(settings),
      prefix: settings.prefix,
      name: options.name,
      concurrency: options.concurrency ?? 10,
      lockDuration: options.lockMs ?? 10_000,
      stalledInterval: options.stalledIntervalMs ?? 5_000,
      maxStalledCount: options.maxStalls ?? 2,
      // A job handed back waits a quarter second; long polls would leave it there for seconds.
      drainDelay: 1,
    },
  );
  worker.on('error', report);

  return {
    name: options.name,
    async ready() {
      await worker.waitUntilReady();
    },
    async close(force = false) {
      // Jobs let go of end at once; a close that still hangs (Redis was away and a blocking read
      // never returns) is forced after a while, which leaves nothing behind: BullMQ's stalled-job
      // recovery gives any job still held to another worker.
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        worker.close(force).then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 5_000))),
      ]);
      clearTimeout(timer);
      if (!closed) await worker.disconnect().catch(() => {});
      await Promise.race([queue?.close(), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
    },
  };
}

/** The path with symbolic links resolved where it exists, so two spellings of one folder match. */
function canonicalPath(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

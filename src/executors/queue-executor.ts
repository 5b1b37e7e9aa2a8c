import { ConfigError } from '../errors/config-error.ts';
import type { RunExecutor } from '../runs/run-executor.ts';
import type { BullmqExecutorOptions } from './bullmq/bullmq-executor.ts';

/** The queue options of a runtime (grouped in `CadreOptions`). */
export interface QueueOptions {
  /**
   * A `redis://` URL (with an optional `?prefix=NAME`): runs execute on `cadre worker` processes
   * (or `createCadreWorker`) through BullMQ, against this store, which must then be shared
   * (Postgres, or a SQLite file on one machine). This runtime still schedules them, with the same
   * caps and order, and sees their events (through `coordination`, which should then be
   * `createRedisCoordination` of `cadre/bullmq`). Needs the `bullmq` and `ioredis` packages,
   * loaded only then. @default runs execute in this process
   */
  queue?: string;
  /**
   * The workspace runs work in: the repository runs' own worktrees are made in, and with a queue,
   * carried by each queued run (only a worker serving that folder takes it). @default the working directory
   */
  workspace?: string;
}

/** A run executor that can be closed (its connections, its timers). */
export interface ClosableExecutor extends RunExecutor {
  close(): Promise<void>;
}

/**
 * The executor that sends runs to the queue's workers (`cadre/bullmq`), loaded on the first run:
 * `bullmq` stays out of the runtime until a queue is configured and used. Fails each run with a
 * {@link ConfigError} saying what to install when the packages are missing.
 */
export function createQueueExecutor(options: BullmqExecutorOptions): ClosableExecutor {
  let loading: Promise<ClosableExecutor> | undefined;
  const load = () =>
    (loading ??= import('./bullmq/bullmq-executor.ts').then(
      ({ createBullmqExecutor }) => createBullmqExecutor(options),
      (error: unknown) => {
        throw new ConfigError(`The queue needs the 'bullmq' and 'ioredis' packages: npm install bullmq ioredis (${(error as Error).message.split('\n')[0]}).`, {
          cause: error,
        });
      },
    ));
  return {
    async execute(run, signal, context) {
      return (await load()).execute(run, signal, context);
    },
    async close() {
      if (loading) await (await loading.catch(() => undefined))?.close();
    },
  };
}

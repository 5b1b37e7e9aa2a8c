/**
 * `cadre/bullmq`: runs carried out by worker processes through a BullMQ queue on Redis, and
 * coordination over Redis publish/subscribe. Needs the `bullmq` and `ioredis` packages; loaded
 * only by those who import it (or set `queue` to a `redis://` URL). A whole worker on a runtime
 * is `createCadreWorker` of `cadre`.
 */
export { createBullmqExecutor, type BullmqExecutor, type BullmqExecutorOptions } from './bullmq-executor.ts';
export { createRunWorker, type RunWorker, type RunWorkerOptions } from './run-worker.ts';
export { parseQueueUrl, runQueueName, type QueueSettings, type RunJobData, type RunJobResult } from './run-job.ts';
export { isStalledFailure } from './stalled-failure.ts';
export { createRedisCoordination, type RedisCoordinationOptions } from '../../coordination/redis-coordination.ts';

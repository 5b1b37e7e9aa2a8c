import type { ApprovalMode } from '../../approvals/approval-broker.ts';
import type { PermissionsConfig } from '../../permissions/permissions.ts';
import type { RunStatus } from '../../store/records.ts';

/** The BullMQ queue every run job goes through, under the queue's prefix. */
export const runQueueName = 'runs';

/**
 * What a run's job carries: the run (its record, transcript and events are in the shared store),
 * the workspace its tools work in, and the host's settings that decide what its tool calls may do.
 */
export interface RunJobData {
  run_id: string;
  /** The absolute path of the workspace the run's tools work in; only a worker serving it takes the job. */
  workspace: string;
  /** What the run's asks do on a worker: `wait` for an answer from anywhere, `deny`, or `yes`. */
  approvals: Exclude<ApprovalMode, 'ask'>;
  /** The host's permission rules (its configuration and flags); absent: the worker's own. */
  permissions?: PermissionsConfig;
  /** Workers that refused the job because they do not have its workspace. */
  refused_by?: string[];
  /**
   * The lease owner of the worker runtime that took the run last: a worker given the job again
   * (BullMQ thought its holder stalled, say while Redis was away) waits while that holder's
   * lease in the store is alive, so a run never executes twice at once.
   */
  holder?: string;
  /** The lease owner id of the host that sent the job: the run's output is relayed to it while it is watched. */
  host?: string;
  /** Whether someone watched the host's live views when it sent the job (then the run streams from its start). */
  watched?: boolean;
}

/** What a finished run job returns. */
export interface RunJobResult {
  status: RunStatus;
}

/** Where the queue lives: a Redis server and the key prefix of cadre's queue on it. */
export interface QueueSettings {
  /** The Redis URL without cadre's own parameters (`redis://host:port/db`). */
  url: string;
  /** Prefix of every key of cadre's queue. @default 'cadre' */
  prefix: string;
}

/**
 * Reads a queue spec: a `redis://` (or `rediss://`) URL, with an optional `?prefix=NAME` so that
 * several cadre installations (or test runs) share one Redis server without seeing each other's runs.
 *
 * @example
 * parseQueueUrl('redis://127.0.0.1:6379/0?prefix=team-a') // { url: 'redis://127.0.0.1:6379/0', prefix: 'team-a' }
 */
export function parseQueueUrl(spec: string): QueueSettings {
  const url = new URL(spec.trim());
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new Error(`A queue is a redis:// URL, not '${url.protocol}'`);
  const prefix = url.searchParams.get('prefix') ?? 'cadre';
  if (!/^[\w.-]+$/.test(prefix)) throw new Error(`The queue prefix '${prefix}' may hold only letters, digits, '_', '.' and '-'`);
  url.searchParams.delete('prefix');
  return { url: url.toString(), prefix };
}

/** Options of every BullMQ connection cadre opens: blocking workers need requests that never give up. */
export function connectionOf(settings: QueueSettings): { url: string; maxRetriesPerRequest: null } {
  return { url: settings.url, maxRetriesPerRequest: null };
}

import { hostname } from 'node:os';
import type { ApprovalMode } from '../approvals/approval-broker.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { Coordination } from '../coordination/coordination.ts';
import { ConfigError } from '../errors/config-error.ts';
import type { RunJobData, RunJobResult } from '../executors/bullmq/run-job.ts';
import type { RunJobControl, RunWorker } from '../executors/bullmq/run-worker.ts';
import type { RunRecord } from '../store/records.ts';
import { ownerIsGone } from '../util/owner-liveness.ts';
import { isFinished } from '../store/records.ts';
import { createCadreRuntime, type CadreRuntime, type CadreOptions } from './create-cadre.ts';
import { addMs, systemNowMs } from '../util/clock.ts';

/** Options of {@link createCadreWorker}: a runtime's options, without those of a host. */
export interface CadreWorkerOptions extends Omit<CadreOptions, 'queue' | 'approvals' | 'approver' | 'coordination'> {
  /** The queue: a `redis://` URL with an optional `?prefix=NAME`, as the hosts have it. */
  queue: string;
  /** Runs carried out at once. @default 10 */
  concurrency?: number;
  /** This worker's name among the queue's workers. @default `<host>:<pid>` */
  name?: string;
  /**
   * Signals between processes. @default Redis publish/subscribe on the queue's server (loaded
   * from `cadre/bullmq`), closed with the worker
   */
  coordination?: Coordination;
  /**
   * How long a run's job lock lasts without renewal (BullMQ `lockDuration`): a worker that dies
   * holds its runs no longer than this before another worker resumes them. @default 10000
   */
  lockMs?: number;
  /** How often stalled jobs are looked for (BullMQ `stalledInterval`). @default 5000 */
  stalledIntervalMs?: number;
  /** Times a run may be resumed after its worker died before it ends `abandoned`. @default 2 */
  maxStalls?: number;
  /**
   * Loads the agents again (their files may have changed since the worker started), when a run
   * names an agent this worker does not know, or `agentsVersion` changed. @default agents stay as given
   */
  reloadAgents?: () => Promise<AgentRegistry>;
  /**
   * A version of the agents' files, read as each run starts: when it differs from the one read at
   * the last load, `reloadAgents` loads them again first, so a run uses the agents as they are on
   * disk when it starts (`agentFilesVersion` of `cadre` lists and stats the files, without reading
   * them). Runs under way keep the agents they started with. @default only unknown names reload
   */
  agentsVersion?: () => Promise<string>;
}

/** A worker carrying out runs from the queue; see {@link createCadreWorker}. */
export interface CadreWorker {
  readonly name: string;
  /** The workspace this worker serves. */
  readonly workspace: string;
  /** Runs this worker carries out now (nested runs they started not counted). */
  activeRuns(): number;
  /**
   * Stops taking runs and lets go of those it carries out: they go back to the queue, and another
   * worker resumes them from their stored transcripts.
   */
  close(): Promise<void>;
}

/**
 * A worker of the run queue (`cadre worker` is one): takes runs that hosts (`cadre run`, `serve`,
 * `mcp`, or `createCadre` with `queue`) sent, when they work in this worker's workspace, and
 * carries them out against the shared store, with this worker's agents, tools and keys. Their
 * events, stops, asks and ends travel through the store and the coordination, so they behave
 * as if they ran in the host. Runs they start run here too. A worker killed mid-run loses nothing:
 * BullMQ's stalled-job recovery gives its runs to another worker, which resumes them.
 *
 * @example
 * const worker = await createCadreWorker({ store, model: 'anthropic:claude-sonnet-4-5', queue: 'redis://127.0.0.1:6379', concurrency: 25 });
 */
export async function createCadreWorker(options: CadreWorkerOptions): Promise<CadreWorker> {
  const { queue, concurrency = 10, lockMs, stalledIntervalMs, maxStalls, reloadAgents, agentsVersion, ...runtimeOptions } = options;
  let agents = options.agents;
  const workspace = options.workspace ?? process.cwd();
  const name = options.name ?? `${hostname()}:${process.pid}`;
  let modules: [
    typeof import('../executors/bullmq/run-worker.ts'),
    typeof import('../coordination/redis-coordination.ts'),
    typeof import('../executors/bullmq/worker-relay.ts'),
  ];
  try {
    modules = await Promise.all([
      import('../executors/bullmq/run-worker.ts'),
      import('../coordination/redis-coordination.ts'),
      import('../executors/bullmq/worker-relay.ts'),
    ]);
  } catch (error) {
    throw new ConfigError(`A worker needs the 'bullmq' and 'ioredis' packages: npm install bullmq ioredis (${(error as Error).message.split('\n')[0]}).`, {
      cause: error,
    });
  }
  const [{ createRunWorker }, { createRedisCoordination }, { createWorkerRelay }] = modules;
  const report = options.onError ?? ((error: unknown) => console.error(error));
  // The runtimes' clock: the relay's and the queue worker's times are read on it too.
  const nowMs = options.nowMs ?? systemNowMs;
  const coordination = options.coordination ?? createRedisCoordination({ url: queue, store: options.store, onError: report, newId: options.newId });
  // The hosts' views follow these runs: their events always, their output while someone watches.
  const relay = createWorkerRelay({ coordination, nowMs });

  // One runtime per host setting (what asks do, which rules apply): a worker serves hosts that
  // differ in them, and a runtime's approvals are its own.
  interface Runtime {
    runtime: CadreRuntime;
    unforward: () => void;
    /** Runs it carries out now. */
    active: number;
  }
  let runtimes = new Map<string, Runtime>();
  /** Runtimes of agents loaded before the last reload: closed once their runs end. */
  const retired = new Set<Runtime>();
  const close = async (runtime: Runtime) => {
    runtime.unforward();
    await runtime.runtime.cadre.close();
  };
  function runtimeFor(data: RunJobData): Runtime {
    const key = JSON.stringify([data.approvals, data.permissions ?? null]);
    let entry = runtimes.get(key);
    if (!entry) {
      const runtime = createCadreRuntime({
        ...runtimeOptions,
        agents,
        workspace,
        coordination,
        approvals: data.approvals satisfies ApprovalMode,
        permissions: data.permissions ?? options.permissions,
        // The hosts decided when each run starts; nested runs of these take slots beside them.
        limits: { ...options.limits, maxActiveGlobal: Math.max(options.limits?.maxActiveGlobal ?? 64, concurrency * 2) },
      });
      const unforward = relay.attach({ bus: runtime.bus, watch: (listener) => runtime.cadre.subscribe(listener) });
      runtimes.set(key, (entry = { runtime, unforward, active: 0 }));
    }
    return entry;
  }

  /** The agents' files' version when they were last loaded; not known for the agents given (the first run loads them again). */
  let loadedVersion: string | undefined;
  /** A reload under way: runs that start meanwhile wait for it rather than load again. */
  let reloading: Promise<void> | undefined;

  /**
   * The runtime for a run of agent `name`, with the agents as their files are now: loaded again
   * when the files changed since the last load, or when the run names an agent this worker does
   * not know (a file added since).
   */
  async function knowAgent(name: string, data: RunJobData): Promise<Runtime> {
    if (reloadAgents) {
      const version = agentsVersion ? await agentsVersion().catch(() => undefined) : undefined;
      // A reload that began before this version was read may have loaded an older one: once more then.
      for (let attempt = 0; attempt < 2; attempt++) {
        const changed = version !== undefined && version !== loadedVersion;
        if (!changed && (attempt > 0 || runtimeFor(data).runtime.cadre.agents.get(name))) break;
        reloading ??= reload(version).finally(() => (reloading = undefined));
        await reloading;
      }
    }
    return runtimeFor(data);
  }

  async function reload(version: string | undefined): Promise<void> {
    agents = await reloadAgents!();
    if (version !== undefined) loadedVersion = version;
    // Runs under way keep the runtime (and agents) they started with; it closes once they end.
    for (const old of runtimes.values()) {
      if (old.active === 0) void close(old).catch(report);
      else retired.add(old);
    }
    runtimes = new Map();
  }

  const active = new Set<string>();
  let closing: (() => void) | undefined;
  const closed = new Promise<void>((resolve) => (closing = resolve));

  async function carryOut(data: RunJobData, signal: AbortSignal, job: RunJobControl): Promise<RunJobResult> {
    const run = await options.store.getRun(data.run_id);
    if (!run) throw new Error(`No run ${data.run_id} in this worker's database; is it the hosts' database?`);
    if (isFinished(run.status)) return { status: run.status };
    const runtime = await knowAgent(run.agent, data);
    const { runs, ledger, jobs, ownerId, leaseMs, now, nowMs } = runtime.runtime;
    // BullMQ gave the job again while its holder may still carry the run out (it lost Redis for a
    // while, not its life): wait until that holder's lease in the store runs out or the run ends.
    if (data.holder !== undefined && data.holder !== ownerId && run.lease_owner === data.holder && leaseAlive(run, nowMs())) return job.later(1_000);
    // The lease follows the job: stops and views find the run's executor through it. The job
    // records its holder meanwhile (a run that ended meanwhile leaves a holder that holds nothing).
    const [claimed] = await Promise.all([ledger.update(run.id, { lease_owner: ownerId, lease_expires_at: addMs(now(), leaseMs) }), job.hold(ownerId)]);
    if (!claimed || isFinished(claimed.status)) return { status: claimed?.status ?? run.status };
    jobs.set(run.id, data.host);
    active.add(run.id);
    runtime.active++;
    const unfollow = relay.follow(claimed, data);
    try {
      runs.adopt(claimed, { fresh: true });
      // A stop asked before this worker held the lease.
      if (claimed.stop_requested_at !== null) void runs.stop(run.id, claimed.stop_requested_by ?? 'user', claimed.stop_reason ?? undefined).catch(report);
      const onAbort = () => void runs.stop(run.id, 'user', 'The job was canceled.').catch(report);
      signal.addEventListener('abort', onAbort, { once: true });
      const ended = await Promise.race([runs.wait(run.id), closed.then(() => null)]);
      signal.removeEventListener('abort', onAbort);
      if (ended === null || !isFinished(ended.status)) throw new Error('The worker stopped before the run ended; another worker resumes it.');
      return { status: ended.status };
    } finally {
      unfollow();
      jobs.delete(run.id);
      active.delete(run.id);
      if (--runtime.active === 0 && retired.delete(runtime)) void close(runtime).catch(report);
    }
  }

  const worker: RunWorker = createRunWorker({
    queue,
    name,
    workspaces: [workspace],
    concurrency,
    lockMs,
    stalledIntervalMs,
    maxStalls,
    carryOut,
    onError: report,
    nowMs,
  });
  await worker.ready();

  return {
    name,
    workspace,
    activeRuns: () => active.size,
    async close() {
      // Runs let go of first (they go back to the queue), then BullMQ closes once their jobs did.
      const closingRuntimes = [...runtimes.values(), ...retired].map(close);
      closing?.();
      await Promise.allSettled(closingRuntimes);
      await worker.close();
      relay.close();
      if (!options.coordination) await coordination.close();
    },
  };
}

/** Whether the run's lease is held by a process that may still be alive, at `nowMs`. */
function leaseAlive(run: RunRecord, nowMs: number): boolean {
  return run.lease_expires_at !== null && Date.parse(run.lease_expires_at) > nowMs && !ownerIsGone(run.lease_owner);
}

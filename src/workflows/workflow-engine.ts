import { basename } from 'node:path';
import { ConfigError } from '../errors/config-error.ts';
import type { WorkflowRecord } from '../store/records.ts';
import { addMs } from '../util/clock.ts';
import { ownerIsGone } from '../util/owner-liveness.ts';
import type { RunWorkflowOptions, StartedWorkflow, WorkflowEngine, WorkflowScript, WorkflowSource } from './workflow-api.ts';
import { executeWorkflow, type WorkflowExecution } from './workflow-execution.ts';
import type { WorkflowServices } from './workflow-services.ts';

/** The workflow engine of a runtime: starts, replays and stops workflows, and keeps their leases. */
export interface WorkflowRunner extends WorkflowEngine {
  /**
   * Replays a running workflow whose process died (or let it go): takes its lease, recovers its
   * session's runs, and runs its script again (`script`, else the one its source names).
   */
  resume(workflowId: string, options?: { script?: WorkflowScript }): Promise<StartedWorkflow>;
  /** A person's stop, from any process: the workflow and every run it has going end `canceled_by_user`. */
  stop(workflowId: string, reason?: string): Promise<WorkflowRecord | null>;
  /** Replays every running workflow whose process is gone and that `accept`s; the ids it took. */
  resumeOrphans(accept: (workflow: WorkflowRecord) => boolean): Promise<string[]>;
  /** Whether this process runs the workflow now. */
  isLocal(workflowId: string): boolean;
  /** Lets every workflow of this process go (they stay `running`, for a replay); call before the runs close. */
  close(): void;
}

const farFuture = '9999-12-31T23:59:59.999Z';

/** The name a workflow gets by default: the file's base name (without `.workflow.js`), the registered name, or `script`. */
export function defaultWorkflowName(source: WorkflowSource): string {
  if (source.kind === 'registered') return source.name;
  if (source.kind === 'script') return 'script';
  return basename(source.path).replace(/(\.workflow)?\.(m?js|ts|mts)$/, '');
}

/** Creates the {@link WorkflowRunner} on the runtime's services. */
export function createWorkflowEngine(services: WorkflowServices): WorkflowRunner {
  const { store, now, ownerId, leaseMs } = services;
  const pollMs = services.pollMs ?? 250;
  const local = new Map<string, WorkflowExecution>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const until = () => addMs(now(), leaseMs);

  /** Looks for stops asked by other processes, and renews the leases of this process's workflows. */
  async function watch(): Promise<void> {
    for (const [id, execution] of local) {
      const current = await store.getWorkflow(id);
      if (!current || current.status !== 'running' || (current.lease_owner !== ownerId && current.lease_owner !== null)) {
        execution.detach();
        continue;
      }
      if (current.stop_requested_at !== null) {
        await execution.end('canceled_by_user', { kind: 'stopped', message: 'Stopped by a person.' });
        continue;
      }
      if (current.lease_expires_at === null || Date.parse(current.lease_expires_at) - Date.parse(now()) < (leaseMs * 2) / 3) {
        const renewed = await store.updateWorkflow(id, { lease_expires_at: until() }, { statuses: ['running'], lease_owner: ownerId });
        if (!renewed) execution.detach();
      }
    }
  }

  function schedule(): void {
    if (timer || closed || local.size === 0) return;
    timer = setTimeout(() => {
      watch()
        .catch(services.onError)
        .finally(() => {
          timer = undefined;
          schedule();
        });
    }, pollMs);
    timer.unref?.();
  }

  function start(record: WorkflowRecord, script: WorkflowScript, storedRuns: Parameters<typeof executeWorkflow>[3]): StartedWorkflow {
    const execution = executeWorkflow(services, record, script, storedRuns);
    local.set(record.id, execution);
    void execution.done.finally(() => {
      if (local.get(record.id) === execution) local.delete(record.id);
    });
    schedule();
    return handle(record.id, execution);
  }

  function handle(id: string, execution: WorkflowExecution): StartedWorkflow {
    return {
      id,
      done: execution.done,
      stop: async (reason) => {
        await engine.stop(id, reason);
      },
    };
  }

  const engine: WorkflowRunner = {
    async run(script, input, options: RunWorkflowOptions) {
      if (closed) throw new Error('The runtime is closed.');
      if (typeof script !== 'function') throw new ConfigError('A workflow is a function (w, input) => ...; its file must export one as default.');
      let storedInput: unknown;
      try {
        storedInput = input === undefined ? null : JSON.parse(JSON.stringify(input));
      } catch (error) {
        throw new ConfigError(`A workflow's input must be JSON: ${(error as Error).message}`);
      }
      if (options.sessionId !== undefined && !(await store.getSession(options.sessionId))) throw new ConfigError(`No session '${options.sessionId}'.`);
      const sessionId = options.sessionId ?? (await services.createSession());
      const at = now();
      const record: WorkflowRecord = {
        id: services.newId('wf'),
        name: options.name ?? defaultWorkflowName(options.source),
        status: 'running',
        session_id: sessionId,
        parent_run_id: options.parentRunId ?? null,
        depth: options.depth ?? 0,
        input: storedInput,
        output: null,
        error: null,
        phases: [],
        log: [],
        source: options.source,
        max_runs: options.maxRuns ?? null,
        created_at: at,
        updated_at: at,
        ended_at: null,
        lease_owner: options.background ? null : ownerId,
        lease_expires_at: options.background ? null : until(),
        stop_requested_at: null,
      };
      await store.insertWorkflow(record);
      services.onChange?.(record);
      if (options.background) {
        return { id: record.id, done: Promise.resolve({ id: record.id, status: 'running', output: null, error: null, runs: [] }), stop: (reason) => engine.stop(record.id, reason).then(() => {}) };
      }
      const started = start(record, script, []);
      if (options.signal) {
        const signal = options.signal;
        const onAbort = () => void engine.stop(record.id, 'Stopped by a person.').catch(services.onError);
        if (signal.aborted) onAbort();
        else {
          signal.addEventListener('abort', onAbort, { once: true });
          void started.done.finally(() => signal.removeEventListener('abort', onAbort));
        }
      }
      return started;
    },

    async resume(workflowId, { script } = {}) {
      const existing = local.get(workflowId);
      if (existing) return handle(workflowId, existing);
      const record = await store.getWorkflow(workflowId);
      if (!record) throw new ConfigError(`No workflow '${workflowId}'. List them with: cadre workflows`);
      if (record.status !== 'running') throw new ConfigError(`Workflow ${workflowId} has ended ${record.status}; there is nothing to resume.`);
      const gone = ownerIsGone(record.lease_owner);
      const claimed = await store.claimWorkflow(workflowId, ownerId, until(), gone ? farFuture : now());
      if (!claimed) {
        throw new ConfigError(
          `Workflow ${workflowId} is running in another process (${record.lease_owner}, its lease lasts until ${record.lease_expires_at}); stop it with cadre stop ${workflowId}, or resume it once that process is gone.`,
        );
      }
      const loaded = script ?? (await services.loadScript(claimed));
      if (!loaded) {
        await store.updateWorkflow(workflowId, { lease_expires_at: now() }, { lease_owner: ownerId });
        throw new ConfigError(describeMissingSource(claimed));
      }
      await services.recover(claimed.session_id);
      const storedRuns = await store.listRuns({ workflow_id: workflowId, order: 'oldest' });
      services.onChange?.(claimed);
      return start(claimed, loaded, storedRuns);
    },

    async stop(workflowId, reason = 'Stopped by a person.') {
      const record = await store.getWorkflow(workflowId);
      if (!record || record.status !== 'running') return record;
      const execution = local.get(workflowId);
      if (execution) {
        await execution.end('canceled_by_user', { kind: 'stopped', message: reason });
        return store.getWorkflow(workflowId);
      }
      await store.updateWorkflow(workflowId, { stop_requested_at: now() }, { statuses: ['running'] });
      // Its runs are stopped from here too, so they end in time whatever their owners do.
      const going = await store.listRuns({ workflow_id: workflowId, statuses: ['queued', 'running'] });
      await Promise.all(going.map((run) => services.runs.stop(run.id, 'user', reason).catch(services.onError)));
      const alive = record.lease_owner !== null && !ownerIsGone(record.lease_owner) && record.lease_expires_at !== null && record.lease_expires_at > now();
      if (!alive) {
        const claimed = await store.claimWorkflow(workflowId, ownerId, until(), ownerIsGone(record.lease_owner) ? farFuture : now());
        if (claimed) {
          const at = now();
          await store.updateWorkflow(
            workflowId,
            { status: 'canceled_by_user', error: { kind: 'stopped', message: reason }, ended_at: at, updated_at: at, lease_owner: null, lease_expires_at: null },
            { statuses: ['running'], lease_owner: ownerId },
          );
        }
        return store.getWorkflow(workflowId);
      }
      // Its owner sees the request at its next look (every `pollMs`) and ends it.
      const deadline = Date.parse(now()) + 2_500;
      for (;;) {
        const current = await store.getWorkflow(workflowId);
        if (!current || current.status !== 'running' || Date.parse(now()) >= deadline) return current;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },

    async resumeOrphans(accept) {
      const taken: string[] = [];
      for (const record of await store.listWorkflows({ statuses: ['running'] })) {
        if (local.has(record.id)) continue;
        const expired = record.lease_expires_at === null || record.lease_expires_at < now();
        if (!expired && !ownerIsGone(record.lease_owner)) continue;
        if (!accept(record)) continue;
        try {
          await engine.resume(record.id);
          taken.push(record.id);
        } catch (error) {
          services.onError(error);
        }
      }
      return taken;
    },

    isLocal: (workflowId) => local.has(workflowId),

    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      for (const [id, execution] of local) {
        execution.detach();
        // Let it go at once: the next process may replay it without waiting for the lease to end.
        void store.updateWorkflow(id, { lease_expires_at: now() }, { lease_owner: ownerId, statuses: ['running'] }).catch(services.onError);
      }
      local.clear();
    },
  };
  return engine;
}

function describeMissingSource(workflow: WorkflowRecord): string {
  const { source } = workflow;
  if (source.kind === 'registered') {
    return `Workflow ${workflow.id} was registered as '${source.name}' by a library process (cadre.workflow('${source.name}', fn)); that process resumes it when it starts.`;
  }
  if (source.kind === 'script') return `Workflow ${workflow.id} was written by a model; this process cannot run its script.`;
  return `Workflow ${workflow.id}: its file ${source.path} cannot be loaded.`;
}

/** Whether a workflow has ended. */
export function isWorkflowFinished(workflow: Pick<WorkflowRecord, 'status'>): boolean {
  return workflow.status !== 'running';
}

import { AsyncLocalStorage } from 'node:async_hooks';
import { startDelegation, type DelegationRequest } from '../delegation/start-delegation.ts';
import { isFinished, type RunRecord, type WorkflowRecord, type WorkflowStatusName } from '../store/records.ts';
import type { WorkflowAgentOptions, WorkflowApi, WorkflowOutcome, WorkflowScript, WorkflowStage, WorkflowThunk } from './workflow-api.ts';
import { WorkflowDivergenceError, WorkflowRunError, WorkflowRunLimitError, WorkflowStoppedError } from './workflow-errors.ts';
import { callInputHash, callKey, parallelPath, pipelinePath, type WorkflowPath } from './workflow-keys.ts';
import type { WorkflowServices } from './workflow-services.ts';
import { createWorkflowSlots } from './workflow-slots.ts';

/** One execution (or replay) of a workflow's script in this process. */
export interface WorkflowExecution {
  readonly id: string;
  /** Settles when the workflow ended (in any way), or when this process let it go. */
  readonly done: Promise<WorkflowOutcome>;
  /** Ends the workflow with `status` (a person's stop: `canceled_by_user`), stopping its runs. */
  end(status: WorkflowStatusName, error: WorkflowRecord['error'], output?: unknown): Promise<void>;
  /** Lets the workflow go without ending it (this process shuts down, or lost its lease): it stays `running` for a replay. */
  detach(): void;
}

const optionKeys = ['description', 'context', 'output_schema', 'isolation', 'max_turns'] as const;

/**
 * Runs a workflow's script with a durable `w` (CONTRACT section 22). Each `w.agent` call has a key:
 * its path (the enclosing `parallel` and `pipeline` branches, kept across awaits by
 * AsyncLocalStorage) and its number on that path. A call whose key has a stored run returns that
 * run's result (finished) or waits for it (under way); a call with other inputs at a stored key
 * is a divergence and fails the workflow; the rest start runs, at most `maxActive` at once, so the
 * workflow holds back its calls beyond the caps itself.
 */
export function executeWorkflow(services: WorkflowServices, record: WorkflowRecord, script: WorkflowScript, storedRuns: readonly RunRecord[]): WorkflowExecution {
  const { store, runs, now, ownerId } = services;
  const scope = new AsyncLocalStorage<WorkflowPath>();
  const stored = new Map<string, RunRecord>();
  for (const run of storedRuns) if (run.workflow) stored.set(run.workflow.key, run);
  const visited = new Set<string>();
  const counters = new Map<string, number>();
  const active = new Set<string>();
  const slots = createWorkflowSlots(services.maxActive);
  const phases = [...record.phases];
  const log = [...record.log];
  // Replayed phases and log lines keep their place (and time) while they repeat the stored ones.
  let phaseAt = 0;
  let logAt = 0;
  let started = storedRuns.length;
  let over = false;
  let detached = false;
  let saving: Promise<unknown> = Promise.resolve();
  let settle!: (outcome: WorkflowOutcome) => void;
  const done = new Promise<WorkflowOutcome>((resolve) => (settle = resolve));

  const next = (counter: string) => {
    const value = counters.get(counter) ?? 0;
    counters.set(counter, value + 1);
    return value;
  };
  const path = () => scope.getStore() ?? '';
  const stoppedError = () => new WorkflowStoppedError(`Workflow ${record.id} has ended; no more runs start.`);

  function save(): void {
    const at = now();
    const patch = { phases: [...phases], log: [...log], updated_at: at };
    saving = saving
      .then(() => store.updateWorkflow(record.id, patch, { statuses: ['running'], lease_owner: ownerId }))
      .then((written) => written && services.onChange?.(written))
      .catch(services.onError);
  }

  function resultOf(run: RunRecord, key: string, options: WorkflowAgentOptions): unknown {
    if (run.status === 'completed_empty') return options.output_schema ? null : '';
    if (run.status !== 'completed') throw new WorkflowRunError({ runId: run.id, status: run.status, error: run.error, key, agent: run.agent });
    const result = run.result as (RunRecord['result'] & { value?: unknown }) | null;
    if (!options.output_schema) return result?.text ?? '';
    if (result && result.value !== undefined) return result.value;
    // A run layer without structured results yet: the text, as JSON when it is.
    try {
      return JSON.parse(result?.text ?? 'null');
    } catch {
      return result?.text ?? null;
    }
  }

  async function call(agent: unknown, task: unknown, given: unknown): Promise<unknown> {
    if (typeof agent !== 'string' || agent.trim() === '') throw new TypeError('w.agent(agent, task, options?): agent must be the name of an agent.');
    if (typeof task !== 'string') throw new TypeError('w.agent(agent, task, options?): task must be a string.');
    if (given !== undefined && (given === null || typeof given !== 'object')) throw new TypeError('w.agent(agent, task, options?): options must be an object.');
    const options: WorkflowAgentOptions = {};
    for (const name of optionKeys) {
      const value = (given as Record<string, unknown> | undefined)?.[name];
      if (value !== undefined) (options as Record<string, unknown>)[name] = value;
    }
    const where = path();
    const key = callKey(where, next(`${where}|call`));
    const hash = callInputHash(agent, task, options);
    if (over) throw stoppedError();
    const earlier = stored.get(key);
    if (earlier) {
      visited.add(key);
      if (earlier.input_hash !== hash) {
        const detail =
          earlier.agent !== agent
            ? `the first execution called agent '${earlier.agent}' there (run ${earlier.id}), this one '${agent}'.`
            : `its task or options differ from those of run ${earlier.id}.`;
        throw diverge(new WorkflowDivergenceError(key, detail));
      }
      const run = isFinished(earlier.status) ? earlier : await runs.wait(earlier.id);
      return resultOf(run, key, options);
    }
    if (record.max_runs !== null && started >= record.max_runs) throw new WorkflowRunLimitError(record.max_runs);
    started++;
    await slots.acquire();
    try {
      if (over) throw stoppedError();
      const request = {
        agent,
        task,
        ...options,
        mode: 'foreground',
        toolCallId: null,
        workflow: { id: record.id, key, input_hash: hash },
      } as DelegationRequest;
      const run = await startDelegation(services.delegation, { sessionId: record.session_id, depth: record.depth, parentRunId: record.parent_run_id }, request);
      active.add(run.id);
      stored.set(key, run);
      visited.add(key);
      const ended = await runs.wait(run.id);
      active.delete(run.id);
      stored.set(key, ended);
      return resultOf(ended, key, options);
    } finally {
      slots.release();
    }
  }

  function diverge(error: WorkflowDivergenceError): WorkflowDivergenceError {
    void end('failed', { kind: 'divergence', message: error.message });
    return error;
  }

  const w: WorkflowApi = {
    agent: (agent, task, options) => call(agent, task, options),

    parallel<T>(thunks: ReadonlyArray<WorkflowThunk<T>>): Promise<T[]> {
      if (!Array.isArray(thunks) || thunks.some((thunk) => typeof thunk !== 'function')) {
        return Promise.reject(new TypeError('w.parallel(thunks): give an array of functions, each starting one branch: [() => w.agent(...), ...].'));
      }
      const where = path();
      const combinator = next(`${where}|combinator`);
      return Promise.all(thunks.map((thunk, index) => scope.run(parallelPath(where, combinator, index), async () => thunk())));
    },

    pipeline(items, ...stages) {
      if (!Array.isArray(items)) return Promise.reject(new TypeError('w.pipeline(items, ...stages): items must be an array.'));
      if (stages.some((stage) => typeof stage !== 'function')) return Promise.reject(new TypeError('w.pipeline(items, ...stages): each stage must be a function (value, index) => ....'));
      const where = path();
      const combinator = next(`${where}|combinator`);
      // Each item goes through the stages in turn, on its own: stages of different items overlap.
      return Promise.all(
        items.map(async (item, index) => {
          let value: unknown = item;
          for (const [stageIndex, stage] of stages.entries()) {
            value = await scope.run(pipelinePath(where, combinator, index, stageIndex), async () => (stage as WorkflowStage)(value, index));
          }
          return value;
        }),
      );
    },

    phase(name) {
      const text = String(name);
      if (over) return;
      if (phaseAt < phases.length && phases[phaseAt].name === text) phaseAt++;
      else {
        phases.splice(phaseAt, phases.length - phaseAt, { name: text, at: now() });
        phaseAt = phases.length;
      }
      save();
    },

    log(text) {
      const line = String(text);
      if (over) return;
      if (logAt < log.length && log[logAt].text === line) logAt++;
      else {
        log.splice(logAt, log.length - logAt, { at: now(), text: line });
        logAt = log.length;
      }
      save();
    },
  };

  /** The runs of the workflow still queued or running, here or anywhere. */
  async function stopRuns(cause: 'user' | 'parent', reason: string): Promise<void> {
    const going = await store.listRuns({ workflow_id: record.id, statuses: ['queued', 'running'] });
    await Promise.all(going.map((run) => runs.stop(run.id, cause, reason).catch(services.onError)));
  }

  async function end(status: WorkflowStatusName, error: WorkflowRecord['error'], output: unknown = null): Promise<void> {
    if (over) return;
    over = true;
    slots.close(stoppedError());
    // A person's stop from another process wins over what the script did meanwhile (its runs
    // ending canceled_by_user made its calls reject).
    const current = status === 'canceled_by_user' ? null : await store.getWorkflow(record.id).catch(() => null);
    if (current?.stop_requested_at) {
      status = 'canceled_by_user';
      error = { kind: 'stopped', message: 'Stopped by a person.' };
      output = null;
    }
    if (status !== 'completed') await stopRuns(status === 'canceled_by_user' ? 'user' : 'parent', `Its workflow ${record.id} ended ${status}.`);
    await saving;
    const at = now();
    const written = await store
      .updateWorkflow(
        record.id,
        { status, output, error, phases: [...phases], log: [...log], updated_at: at, ended_at: at, lease_owner: null, lease_expires_at: null },
        { statuses: ['running'], lease_owner: ownerId },
      )
      .catch((failure: unknown) => {
        services.onError(failure);
        return null;
      });
    if (written) services.onChange?.(written);
    const final = written ?? (await store.getWorkflow(record.id)) ?? { ...record, status, output, error };
    const ended = await store.listRuns({ workflow_id: record.id, order: 'oldest' });
    settle({
      id: record.id,
      status: final.status,
      output: final.output,
      error: final.error,
      runs: ended.map((run) => ({ run_id: run.id, key: run.workflow?.key ?? '', agent: run.agent, status: run.status })),
    });
  }

  function finishScript(value: unknown): Promise<void> {
    const missing = [...stored.keys()].find((key) => !visited.has(key));
    if (missing !== undefined) {
      const run = stored.get(missing)!;
      return end('failed', { kind: 'divergence', message: new WorkflowDivergenceError(missing, `this execution made no such call (run ${run.id}, agent '${run.agent}').`).message });
    }
    let output: unknown;
    try {
      output = value === undefined ? null : JSON.parse(JSON.stringify(value));
    } catch (error) {
      return end('failed', { kind: 'invalid_output', message: `The script's return value is not JSON: ${(error as Error).message}` });
    }
    return end('completed', null, output);
  }

  function failScript(error: unknown): Promise<void> {
    if (WorkflowRunError.isInstance(error)) return end('failed', { kind: 'run_failed', message: error.message });
    if (WorkflowRunLimitError.isInstance(error)) return end('failed', { kind: 'max_runs', message: error.message });
    const message = error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error);
    return end('failed', { kind: 'script_error', message });
  }

  const input = record.input === undefined ? null : structuredClone(record.input);
  const trace = services.traceWorkflow ?? ((_workflow, work) => work());
  // The script runs inside the workflow's span: the runs it starts nest under it.
  void trace({ id: record.id, name: record.name, sessionId: record.session_id, replay: storedRuns.length > 0 }, async () => {
    Promise.resolve()
      .then(() => scope.run('', () => script(w, input)))
      .then(
        (value) => (over || detached ? undefined : finishScript(value)),
        (error: unknown) => (over || detached ? undefined : failScript(error)),
      )
      .catch(services.onError);
    const outcome = await done;
    return outcome.error ? { error: outcome.error } : {};
  }).catch(services.onError);

  return {
    id: record.id,
    done,
    end,
    detach() {
      if (over) return;
      over = true;
      detached = true;
      slots.close(new WorkflowStoppedError(`This process let workflow ${record.id} go; resume it with: cadre workflow resume ${record.id}`));
      void store.getWorkflow(record.id).then(
        (current) => settle({ id: record.id, status: current?.status ?? 'running', output: current?.output ?? null, error: current?.error ?? null, runs: [] }),
        () => settle({ id: record.id, status: 'running', output: null, error: null, runs: [] }),
      );
    },
  };
}

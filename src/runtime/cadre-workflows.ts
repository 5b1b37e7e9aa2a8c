import { ConfigError } from '../errors/config-error.ts';
import type { WorkflowRecord } from '../store/records.ts';
import type { StartedWorkflow, WorkflowScript } from '../workflows/workflow-api.ts';
import { sandboxedWorkflowScript } from '../workflows/sandbox/run-sandboxed-script.ts';
import { createWorkflowEngine, type WorkflowRunner } from '../workflows/workflow-engine.ts';
import { loadStoredWorkflowFile, loadWorkflowFile } from '../workflows/workflow-file.ts';
import type { WorkflowServices } from '../workflows/workflow-services.ts';
import type { Cadre, CadreWorkflow } from './cadre.ts';

type WorkflowMethods = Pick<Cadre, 'startWorkflow' | 'workflows' | 'workflow' | 'resumeWorkflow' | 'stopWorkflow' | 'resumeWorkflows' | 'subscribeWorkflows'>;

/** The workflow engine of a runtime and the library's methods on it (section 22). */
export interface CadreWorkflows {
  engine: WorkflowRunner;
  api: WorkflowMethods;
}

/**
 * Builds the workflow engine with the scripts this process can give (registered names, files) and
 * the library methods over it.
 */
export function createCadreWorkflows(services: Omit<WorkflowServices, 'loadScript' | 'onChange'>): CadreWorkflows {
  const registered = new Map<string, WorkflowScript>();
  const listeners = new Set<(workflow: WorkflowRecord) => void>();
  const engine = createWorkflowEngine({
    ...services,
    async loadScript(workflow) {
      if (workflow.source.kind === 'registered') return registered.get(workflow.source.name) ?? null;
      if (workflow.source.kind === 'file') return loadStoredWorkflowFile(workflow.source);
      // A model's script is kept as its text: a replay runs the same text in a new sandbox.
      if (workflow.source.kind === 'script') return sandboxedWorkflowScript(workflow.source.text, { maxRuns: workflow.max_runs ?? undefined });
      return null;
    },
    onChange(workflow) {
      for (const listener of listeners) {
        try {
          listener(workflow);
        } catch (error) {
          services.onError(error);
        }
      }
    },
  });
  const withGet = (started: StartedWorkflow): CadreWorkflow => ({
    ...started,
    async get() {
      const record = await services.store.getWorkflow(started.id);
      if (!record) throw new ConfigError(`No workflow '${started.id}'.`);
      return record;
    },
  });

  const api: WorkflowMethods = {
    async startWorkflow(fnOrFile, input, { sessionId, name, signal, background } = {}) {
      if (typeof fnOrFile === 'function') {
        const known = [...registered.entries()].find(([, fn]) => fn === fnOrFile)?.[0];
        const source =
          known !== undefined ? { kind: 'registered' as const, name: known } : { kind: 'registered' as const, name: name ?? (fnOrFile.name || 'workflow') };
        return withGet(await engine.run(fnOrFile, input, { source, name: name ?? source.name, sessionId, signal, background }));
      }
      if (typeof fnOrFile !== 'string') throw new ConfigError('startWorkflow: give a function (w, input) => ..., a workflow file, or a registered name.');
      const script = registered.get(fnOrFile);
      if (script) return withGet(await engine.run(script, input, { source: { kind: 'registered', name: fnOrFile }, name, sessionId, signal, background }));
      const loaded = await loadWorkflowFile(fnOrFile);
      return withGet(await engine.run(loaded.script, input, { source: loaded.source, name, sessionId, signal, background }));
    },

    workflows: ({ statuses, sessionId, limit } = {}) => services.store.listWorkflows({ statuses, session_id: sessionId, limit }),

    workflow(name, fn) {
      if (typeof name !== 'string' || name.trim() === '') throw new ConfigError('cadre.workflow(name, fn): name must be a non-empty string.');
      if (typeof fn !== 'function') throw new ConfigError(`cadre.workflow('${name}', fn): fn must be a function (w, input) => ....`);
      registered.set(name, fn);
      // Workflows of this name whose process died go on here.
      void engine.resumeOrphans((workflow) => workflow.source.kind === 'registered' && workflow.source.name === name).catch(services.onError);
    },

    resumeWorkflow: async (workflowId) => withGet(await engine.resume(workflowId)),
    stopWorkflow: (workflowId, reason) => engine.stop(workflowId, reason),

    resumeWorkflows({ files = false } = {}) {
      return engine.resumeOrphans(
        (workflow) =>
          (workflow.source.kind === 'registered' && registered.has(workflow.source.name)) ||
          // A model's script is stored whole, like a file's text: any process that replays files can replay it.
          (files && (workflow.source.kind === 'file' || workflow.source.kind === 'script')),
      );
    },

    subscribeWorkflows(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return { engine, api };
}

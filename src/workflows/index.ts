export type {
  RunWorkflowOptions,
  StartedWorkflow,
  WorkflowAgentOptions,
  WorkflowApi,
  WorkflowEngine,
  WorkflowOutcome,
  WorkflowRunLine,
  WorkflowScript,
  WorkflowSource,
  WorkflowStage,
  WorkflowStatus,
  WorkflowThunk,
} from './workflow-api.ts';
export { createWorkflowEngine, defaultWorkflowName, isWorkflowFinished, type WorkflowRunner } from './workflow-engine.ts';
export { WorkflowDivergenceError, WorkflowRunError, WorkflowRunLimitError, WorkflowStoppedError } from './workflow-errors.ts';
export { loadStoredWorkflowFile, loadWorkflowFile, type LoadedWorkflowFile } from './workflow-file.ts';
export type { WorkflowServices } from './workflow-services.ts';
export { workflowRunSummary, workflowView, type WorkflowRunSummary, type WorkflowView } from './workflow-view.ts';
export { runSandboxedScript, sandboxedWorkflowScript, type ScriptSandboxOptions, WorkflowScriptError, type WorkflowScriptErrorKind } from './sandbox/index.ts';
export { createWorkflowTool, formatWorkflowOutput, workflowToolName, type WorkflowToolServices } from './workflow-tool.ts';

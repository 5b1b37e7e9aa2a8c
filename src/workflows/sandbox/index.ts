export { runSandboxedScript, sandboxedWorkflowScript, type SandboxOptions } from './run-sandboxed-script.ts';
export { WorkflowScriptError, type WorkflowScriptErrorKind } from './workflow-script-error.ts';

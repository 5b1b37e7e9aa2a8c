export { runSandboxedScript, sandboxedWorkflowScript, type ScriptSandboxOptions } from './run-sandboxed-script.ts';
export { WorkflowScriptError, type WorkflowScriptErrorKind } from './workflow-script-error.ts';

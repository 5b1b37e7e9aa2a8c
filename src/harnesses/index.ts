export { claudeCodeDialect } from './claude-code-dialect.ts';
export { detectContainment, startContained, type Containment, type ContainedProcess } from './contained-process.ts';
export { displayName, findHarnessProgram, missingProgramMessage, programVersion, type FoundProgram, type HarnessCommands } from './find-harness-program.ts';
export { codexDialect } from './codex-dialect.ts';
export { opencodeDialect } from './opencode-dialect.ts';
export { createHarnessAllowance, createHarnessApprover, type HarnessApproverOptions } from './harness-approver.ts';
export type { HarnessAllowance, HarnessDialect, HarnessEvent, HarnessInvocation, HarnessName, HarnessStart } from './harness-dialect.ts';
export { createHarnessExecutor, harnessDialects, type HarnessApprover, type HarnessAsk, type HarnessExecutorOptions } from './harness-executor.ts';
export { routeHarnessRuns } from './route-harness-runs.ts';

/**
 * cadre: a runtime that lets a primary LLM agent delegate work to subagents and manage each
 * delegation as a run with its own lifecycle, events and result.
 * @module
 */

// First, so that an unsupported Node gets one clear line rather than a failure deep inside.
import './util/require-supported-node.ts';

export { createCadre, type Cadre, type CadreOptions } from './runtime/create-cadre.ts';
export { createCadreWorker, type CadreWorker, type CadreWorkerOptions } from './runtime/create-cadre-worker.ts';
export type { RecoveryReport } from './runtime/recover-runs.ts';
export type { CadreWorkflow, StartWorkflowOptions } from './runtime/cadre.ts';
export {
  WorkflowDivergenceError,
  WorkflowRunError,
  WorkflowRunLimitError,
  WorkflowStoppedError,
  workflowView,
  type WorkflowAgentOptions,
  type WorkflowApi,
  type WorkflowOutcome,
  type WorkflowRunLine,
  type WorkflowRunSummary,
  type WorkflowScript,
  type WorkflowSource,
  type WorkflowStage,
  type WorkflowStatus,
  type WorkflowThunk,
  type WorkflowView,
  sandboxedWorkflowScript,
  WorkflowScriptError,
  type ScriptSandboxOptions,
  type WorkflowScriptErrorKind,
} from './workflows/index.ts';
export type { WorkflowRecord } from './store/records.ts';
export type { TurnResult } from './sessions/session-runner.ts';
export type { StopCause } from './runs/run-stop.ts';
export { EmptyRunMessageError, type DeliveredMessage, type RunMessageReceipt } from './runs/run-inbox.ts';
export type { SendToRunResult } from './delegation/send-to-run.ts';
export type { CadreEvent, CadreListener } from './runs/run-bus.ts';
export {
  appLoopAgent,
  isAppSession,
  supportedAiSdkMajors,
  type CadreNotifications,
  type CadreRunApproval,
  type CadreRunPart,
  type CadreRunPartData,
  type CadreRunPartWriter,
  type CadreRunProgress,
  type CadreToolsOptions,
  type WriteRunPartsOptions,
} from './embed/index.ts';

export {
  AgentRegistry,
  defineAgent,
  loadAgents,
  agentFilesVersion,
  type AgentDefinition,
  type AgentInput,
  type AgentLoadError,
  type AgentMcpServer,
  type AgentMode,
  type AgentPermissionMode,
  type LoadAgentsOptions,
} from './agents/index.ts';
export { agentToolNames, mapAgentToolNames, readToolNames } from './agents/index.ts';
export { reportAgent, selectAgentTools, toolPatternMatches, type AgentReport, type SelectedTools, type ToolSelection } from './agents/index.ts';
export { configLocations, defaultModelAliases, resolveAgentModel, resolveModelAlias, userConfigDirectory, type ConfigLocations } from './config/index.ts';
export { defaultLimits, loadConfig, type CadreConfig, type ConfigFlags, type Limits, type LoadConfigOptions, type WorkspaceConfig } from './config/index.ts';
export {
  readWorkspaceTrust,
  recordWorkspaceTrust,
  revokeWorkspaceTrust,
  splitWorkspaceConfig,
  trustedForCommand,
  workspaceTrustFile,
  type GrantItem,
  type WorkspaceConfigSplit,
  type WorkspaceGrant,
  type WorkspacePart,
  type WorkspaceTrustRecord,
  type WorkspaceTrustState,
} from './config/index.ts';
export { describeModel, resolveModel, type LanguageModelInstance, type ResolveModelOptions } from './models/index.ts';
export {
  composeModel,
  createSecretRedactor,
  ModelCallError,
  reliableModel,
  type ModelCallContext,
  type ModelMiddleware,
  type ModelCallFailure,
  type ReliableModelOptions,
  type SecretRedactor,
  type SecretRedactorOptions,
} from './models/index.ts';
export { CadreError, ConfigError } from './errors/index.ts';
export { NotFoundError, type NotFoundKind } from './errors/index.ts';
export { OutputSchemaError, checkOutputSchema, toOutputSchema, type OutputSchema } from './output/index.ts';
export {
  createLogger,
  errorLogger,
  isLogLevel,
  logLevels,
  type CreateLoggerOptions,
  type LogDestination,
  type Logger,
  type LogLevel,
  type LogMethod,
} from './logging/index.ts';
export type { TelemetryProtocol, TelemetrySettings } from './telemetry/telemetry-settings.ts';

export { defineTool, toolInfo, toolRisks, ToolInputError, type ToolDefinition, type ToolInfo, type ToolRisk } from './tools/define-tool.ts';
export { createWorkspaceTools, type WorkspaceToolsOptions } from './tools/workspace-tools.ts';
export {
  createSandbox,
  detectSandbox,
  SandboxUnavailableError,
  type CommandLaunch,
  type Sandbox,
  type SandboxAvailability,
  type SandboxKind,
  type SandboxOptions,
  type SandboxStatus,
} from './tools/sandbox/index.ts';
export { sandboxModes, type SandboxConfig, type SandboxMode } from './config/index.ts';
export {
  composeTools,
  mapToolOutput,
  type PipelineTool,
  type ToolCall,
  type ToolMiddleware,
  type ToolNext,
  type ToolOutputHandlers,
} from './loop/tool-pipeline.ts';
export { checkToolInput } from './tools/check-tool-input.ts';
export { redactToolOutput } from './tools/redact-tool-output.ts';

export {
  compilePermissions,
  decidePermission,
  defaultPermissions,
  parsePermissionRule,
  type DecidedRule,
  type PermissionCall,
  type PermissionDecision,
  type PermissionRisk,
  type PermissionRule,
  type PermissionsConfig,
  type PermissionVerdict,
} from './permissions/index.ts';
export {
  answerApproval,
  approvalModes,
  ToolDeniedError,
  unknownToolRisk,
  type AnsweredApproval,
  type ApprovalAnswer,
  type ApprovalMode,
  type Approver,
} from './approvals/index.ts';

export {
  createSqliteStore,
  finishedStatuses,
  isFinished,
  openStore,
  runStatuses,
  type ApprovalQuery,
  type ApprovalRecord,
  type ApprovalResolver,
  type ApprovalStatus,
  type GuardedRunChange,
  type MessageCommit,
  type MessageCommitResult,
  type MessageRecord,
  type MessageRole,
  type RunErrorKind,
  type RunEventRecord,
  type RunEventType,
  type RunMode,
  type RunQuery,
  type RunMessage,
  type RunMessageSender,
  type RunRecord,
  type RunResult,
  type RunStatus,
  type RunWorktree,
  type SessionRecord,
  type SessionRuleRecord,
  type SessionStatus,
  type SqliteStoreOptions,
  type Store,
  type StoreView,
  StoreFailureError,
  type StoreFailureKind,
  MissingResultError,
  type Usage,
} from './store/index.ts';
export {
  createRunWorktrees,
  WorktreeError,
  type RunWorktrees,
  type WorktreeEntry,
  type WorktreeErrorKind,
  type WorktreeSettings,
} from './worktrees/index.ts';
export { exportSession, renderMarkdownExport, type ExportSessionOptions, type SessionExport } from './export/index.ts';

export {
  createPollingCoordination,
  type Coordination,
  type CoordinationSignal,
  type LiveRunEvent,
  type PollingCoordinationOptions,
  type SignalType,
} from './coordination/index.ts';

export { createTokenBudget, totalTokens, type SessionTokens, type TokenBudget, type TokenBudgetLimits } from './runs/token-budget.ts';
export { displayStatus, runOwnerGone, viewRun, type RunView } from './runs/run-owner.ts';
export { describeRunEvent, parseRunEvent, RunEventDataError, runEventSchema, type RunEvent, type RunEventData, type RunEventInput } from './runs/run-events.ts';
export { renderActivity, type ActivityEventData, type RunActivity, type RunActivityKind } from './store/index.ts';

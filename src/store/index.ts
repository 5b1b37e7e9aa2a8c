/** The store: records, the `Store` interface, the SQLite engine, opening by spec. Export lives in `src/export/`. */
export { finishedStatuses, isFinished, runStatuses } from './records.ts';
export type {
  ApprovalRecord,
  ApprovalResolver,
  ApprovalStatus,
  MessageRecord,
  MessageRole,
  NewMessage,
  NewRunEvent,
  RunErrorKind,
  RunEventRecord,
  RunEventType,
  RunMessage,
  RunMessageSender,
  RunMode,
  RunRecord,
  RunResult,
  RunStatus,
  RunWorktree,
  SessionRecord,
  SessionRuleRecord,
  SessionStatus,
  Usage,
} from './records.ts';
export type {
  ApprovalQuery,
  ApprovalResolution,
  GuardedRunChange,
  MessageCommit,
  MessageCommitResult,
  RunPatch,
  RunQuery,
  RunTransition,
  Store,
} from './store.ts';
export type { StoreView } from './store-view.ts';
export { createSqliteStore, type SqliteStoreOptions } from './sqlite/sqlite-store.ts';
export { openStore, type OpenStoreOptions } from './open-store.ts';
export { StoreFailureError, type StoreFailureKind } from './store-failure-error.ts';
export { MissingResultError } from './core/result-refs.ts';
export { renderActivity, type ActivityEventData, type RunActivity, type RunActivityKind } from './run-activity.ts';
export { redactConnectionString } from './redact-connection-string.ts';
export { redactSecrets, redactSecretsDeep } from './redact-secrets.ts';

/**
 * cadre inside an app's own AI SDK loop: its delegation tools, its notifications and its runs as
 * UI message stream parts (docs/own-ai-sdk-app.md).
 * @module
 */
export { appLoopAgent, isAppSession } from './app-sessions.ts';
export type { CadreToolsOptions, CadreRunProgress } from './app-tools.ts';
export type { CadreNotifications } from './app-notifications.ts';
export type { CadreRunApproval, CadreRunPart, CadreRunPartData, CadreRunPartWriter, WriteRunPartsOptions } from './write-run-parts.ts';
export { supportedAiSdkMajors } from './require-ai-sdk.ts';

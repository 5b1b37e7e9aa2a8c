export {
  defaultConfigFileName,
  loadConfig,
  type CadreConfig,
  type ConfigFlags,
  type LoadConfigOptions,
  type SummarizeConfig,
  type WorkspaceConfig,
} from './load-config.ts';
export { splitWorkspaceConfig, type WorkspaceConfigSplit } from './workspace-config.ts';
export {
  readWorkspaceTrust,
  recordWorkspaceTrust,
  revokeWorkspaceTrust,
  trustedForCommand,
  workspaceTrustFile,
  type GrantItem,
  type WorkspaceGrant,
  type WorkspacePart,
  type WorkspaceTrustRecord,
  type WorkspaceTrustState,
} from './workspace-trust.ts';
export { defaultLimits, limitsSchema, resolveLimits, type Limits } from './limits.ts';
export { configFileSchema, readConfigFile, type ConfigFile } from './read-config-file.ts';
export {
  configLocations,
  databaseFromFlagsAndEnv,
  userConfigDirectory,
  type ConfigLocations,
} from './config-locations.ts';
export { defaultModelAliases, resolveAgentModel, resolveModelAlias, type AgentModelResolution, type ResolveAgentModelOptions } from './model-aliases.ts';
export {
  defaultSandboxConfig,
  resolveSandboxConfig,
  sandboxConfigSchema,
  sandboxModes,
  type SandboxConfig,
  type SandboxConfigFile,
  type SandboxMode,
} from './sandbox-config.ts';

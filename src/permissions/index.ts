/** Permission rules: parsing, the defaults, and deciding one tool call. */
export {
  exactPattern,
  normalizeArgument,
  parsePermissionRule,
  permissionDecisions,
  permissionRisks,
  ruleMatches,
  specificity,
  type PermissionCall,
  type PermissionDecision,
  type PermissionRisk,
  type PermissionRule,
} from './permission-rule.ts';
export {
  compilePermissions,
  decidePermission,
  defaultPermissions,
  matchRules,
  permissionsConfigSchema,
  stricter,
  type DecidedRule,
  type PermissionLayers,
  type PermissionsConfig,
  type PermissionVerdict,
} from './permissions.ts';

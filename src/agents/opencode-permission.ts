import type { PermissionsConfig } from '../permissions/permissions.ts';
import { agentToolNames, cadreToolName, readToolNames } from './agent-tool-names.ts';

const writeToolNames = ['write_file', 'edit_file', 'bash'];

const decisions = new Set(['allow', 'ask', 'deny']);

/** opencode's `edit` permission covers every tool that changes files. */
const toolsOfKey: Readonly<Record<string, readonly string[]>> = { edit: ['write_file', 'edit_file'], write: ['write_file'] };

/**
 * Whether `value` is meant in cadre's own shape, lists of rules under `allow`, `ask`, `deny`
 * (then it is checked as such, typos included), rather than opencode's map of tools to decisions.
 */
export function isCadrePermissions(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return entries.length === 0 || entries.some(([key, rules]) => decisions.has(key) || Array.isArray(rules));
}

/**
 * cadre rules for opencode's `permission` map (`edit: deny`, `bash: { "git *": allow, "*": ask }`,
 * `"*": ask`): a tool's decision becomes a rule on the tool, a pattern's a rule on the tool with
 * that argument, `"*"` at the top a rule on every risk. Keys without a cadre tool (`webfetch`,
 * `task`) are skipped, as are values that are no decision; both are named in `skipped`. As for
 * every agent's rules, they can only make a call stricter.
 * @example opencodePermissionRules({ edit: 'deny' }).permissions // { deny: ['write_file', 'edit_file'] }
 */
export function opencodePermissionRules(value: Record<string, unknown>): { permissions: PermissionsConfig; skipped: string[] } {
  const permissions: Required<PermissionsConfig> = { allow: [], ask: [], deny: [] };
  const skipped: string[] = [];
  const add = (decision: unknown, rules: readonly string[], key: string) => {
    if (typeof decision === 'string' && decisions.has(decision)) permissions[decision as keyof PermissionsConfig].push(...rules);
    else skipped.push(key);
  };
  for (const [key, setting] of Object.entries(value)) {
    if (key === '*') {
      add(setting, ['read', 'write', 'exec', 'network'], key);
      continue;
    }
    const tools = toolsOfKey[key] ?? [cadreToolName(key)];
    if (
      !(
        Object.hasOwn(agentToolNames, key) ||
        Object.hasOwn(toolsOfKey, key) ||
        key.startsWith('mcp__') ||
        readToolNames.includes(key) ||
        writeToolNames.includes(key)
      )
    )
      continue;
    if (typeof setting === 'object' && setting !== null && !Array.isArray(setting)) {
      for (const [pattern, decision] of Object.entries(setting)) {
        const trimmed = pattern.trim();
        add(
          decision,
          tools.map((tool) => (trimmed === '*' || trimmed === '**' || trimmed === '' ? tool : `${tool}(${trimmed})`)),
          `${key}.${pattern}`,
        );
      }
    } else {
      add(setting, tools, key);
    }
  }
  const used = Object.fromEntries(Object.entries(permissions).filter(([, rules]) => rules.length > 0)) as PermissionsConfig;
  return { permissions: used, skipped };
}

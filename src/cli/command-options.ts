import type { ConfigFlags } from '../config/load-config.ts';
import { ConfigError } from '../errors/config-error.ts';

/** Options shared by commands that open the database. */
export interface StoreFlags {
  db?: string;
  config?: string;
  json?: boolean;
  debug?: boolean;
  /** `--log-level`: fatal, error, warn, info, debug, trace or silent. */
  logLevel?: string;
}

/** Options of commands that load agents and a model. */
export interface RuntimeFlags extends StoreFlags {
  agent?: string;
  agents?: string[];
  model?: string;
  baseUrl?: string;
  /** `--allow RULE`, repeatable. */
  allow?: string[];
  /** `--deny RULE`, repeatable. */
  deny?: string[];
  /** `--trust`: the workspace's own configuration applies for this command (docs/security.md). */
  trust?: boolean;
}

/** Commander's collector for a repeatable option such as `--agents DIR`. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The flags that take part in configuration, named as `loadConfig` wants them. */
export function configFlags(flags: RuntimeFlags): ConfigFlags {
  // `cadre approve --deny` is a switch, not a rule.
  const rules = (value: unknown) => (Array.isArray(value) ? (value as string[]) : undefined);
  return {
    db: flags.db,
    model: flags.model,
    baseURL: flags.baseUrl,
    agent: flags.agent,
    agentsDirs: flags.agents,
    allow: rules(flags.allow),
    deny: rules(flags.deny),
    trust: flags.trust === true,
  };
}

/**
 * The value of a `--limit N` flag: a whole number from 1 to 1000, or `fallback` when absent.
 * @throws {ConfigError} for anything else, so a typo is not read as the default
 */
export function parseLimit(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const limit = Number(value);
  if (!/^\d+$/.test(value.trim()) || limit < 1 || limit > 1000) throw new ConfigError(`--limit must be a whole number from 1 to 1000, not '${value}'.`);
  return limit;
}

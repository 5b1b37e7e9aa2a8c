import type { ConfigFlags } from '../config/load-config.ts';

/** Options shared by commands that open the database. */
export interface StoreFlags {
  db?: string;
  config?: string;
  json?: boolean;
  debug?: boolean;
}

/** Options of commands that load agents and a model. */
export interface RuntimeFlags extends StoreFlags {
  agent?: string;
  agents?: string[];
  model?: string;
  baseUrl?: string;
}

/** Commander's collector for a repeatable option such as `--agents DIR`. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The flags that take part in configuration, named as `loadConfig` wants them. */
export function configFlags(flags: RuntimeFlags): ConfigFlags {
  return { db: flags.db, model: flags.model, baseURL: flags.baseUrl, agent: flags.agent, agentsDirs: flags.agents };
}

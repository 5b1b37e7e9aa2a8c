import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors/config-error.ts';

/**
 * How `bash` is confined (docs/tools-and-approvals.md): `auto` uses the OS sandbox where there is one and
 * says once where there is none, `required` refuses `bash` without one, `off` never uses one.
 */
export type SandboxMode = 'auto' | 'required' | 'off';

/** The sandbox modes, in the order help lists them. */
export const sandboxModes: readonly SandboxMode[] = ['auto', 'required', 'off'];

/** The `sandbox` settings, resolved: paths absolute, defaults filled in. */
export interface SandboxConfig {
  /** @default 'auto' */
  mode: SandboxMode;
  /**
   * Whether commands reach the network. A list of hosts would need a filtering proxy, which this
   * build does not have: it is refused as a config error. @default false
   */
  network: boolean;
  /** Absolute paths commands may write besides the workspace and their temp folder. @default [] */
  writable: string[];
}

/** The sandbox when nothing is configured. */
export const defaultSandboxConfig: Readonly<SandboxConfig> = Object.freeze({ mode: 'auto', network: false, writable: [] });

/** `sandbox` as written in `cadre.config.json`; `writable` paths are relative to the file. */
export const sandboxConfigSchema = z.strictObject(
  {
    mode: z.enum(sandboxModes, { error: `must be one of ${sandboxModes.join(', ')}` }).optional(),
    network: z.union([z.boolean(), z.array(z.string())], { error: 'must be true, false or a list of hosts' }).optional(),
    writable: z.array(z.string().trim().min(1, { error: 'must be a path' }), { error: 'must be a list of paths' }).optional(),
  },
  { error: 'must be an object like { "mode": "auto", "network": false, "writable": ["../shared"] }' },
);

/** The `sandbox` object as written. */
export type SandboxConfigFile = z.infer<typeof sandboxConfigSchema>;

/**
 * The written `sandbox` settings with defaults filled in and `writable` resolved against
 * `directory` (the config file's).
 * @param where names the source in errors
 * @throws {ConfigError} for a list of hosts: this build has no filtering proxy, so only `true`
 * (every host) and `false` (none) can be kept.
 */
export function resolveSandboxConfig(written: SandboxConfigFile | undefined, directory: string, where: string): SandboxConfig {
  const network = written?.network ?? defaultSandboxConfig.network;
  if (Array.isArray(network)) {
    throw new ConfigError(
      `${where}: sandbox.network: a list of hosts needs a filtering proxy, which cadre does not have on this platform: ` +
        'only true (every host) or false (none, the default) is supported',
    );
  }
  return {
    mode: written?.mode ?? defaultSandboxConfig.mode,
    network,
    writable: (written?.writable ?? []).map((path) => resolve(directory, path)),
  };
}

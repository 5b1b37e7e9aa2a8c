import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The config file read from the working directory when neither `--config` nor `CADRE_CONFIG` names one. */
export const defaultConfigFileName = 'cadre.config.json';

/** Where configuration may come from; see {@link configLocations}. */
export interface ConfigLocations {
  /** The project's config file: `--config`, else `CADRE_CONFIG`, else `<cwd>/cadre.config.json`. */
  project: string;
  /** What named {@link project} when it must exist: `--config` or `CADRE_CONFIG`; null for the default file. */
  projectNamedBy: '--config' | 'CADRE_CONFIG' | null;
  /** The user's config file, under the project's: `$XDG_CONFIG_HOME/cadre/config.json` (default `~/.config/cadre/config.json`). */
  user: string;
  /** The user's cadre folder (`$XDG_CONFIG_HOME/cadre`), which also holds `agents/`. */
  userDirectory: string;
}

/** A value that counts as given: not absent, not blank. */
export function given(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** The user's cadre folder: `$XDG_CONFIG_HOME/cadre`, or `<home>/.config/cadre` (https://specifications.freedesktop.org/basedir-spec/). */
export function userConfigDirectory(env: Record<string, string | undefined>, home: string = homedir()): string {
  const xdg = given(env.XDG_CONFIG_HOME);
  // The specification ignores a relative XDG_CONFIG_HOME.
  return join(xdg?.startsWith('/') ? xdg : join(home, '.config'), 'cadre');
}

/** Where configuration files are looked up, without reading any. */
export function configLocations(options: { cwd: string; configFile?: string; env: Record<string, string | undefined>; home?: string }): ConfigLocations {
  const cwd = resolve(options.cwd);
  const fromEnv = given(options.env.CADRE_CONFIG);
  const named = given(options.configFile) ?? fromEnv;
  const userDirectory = userConfigDirectory(options.env, options.home);
  return {
    project: resolve(cwd, named ?? defaultConfigFileName),
    projectNamedBy: given(options.configFile) !== undefined ? '--config' : fromEnv !== undefined ? 'CADRE_CONFIG' : null,
    user: join(userDirectory, 'config.json'),
    userDirectory,
  };
}

/** A database spec made absolute against `base`; URLs (postgres://) and SQLite's `:memory:` stay as written. */
export function resolveDatabase(base: string, value: string): string {
  return value === ':memory:' || /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : resolve(base, value);
}

/** The database when no config file takes part: `--db`, else `CADRE_DB`, else `<cwd>/.cadre/cadre.db`. */
export function databaseFromFlagsAndEnv(cwd: string, flag: string | undefined, env: Record<string, string | undefined>): string | undefined {
  const override = given(flag) ?? given(env.CADRE_DB);
  return override === undefined ? undefined : resolveDatabase(resolve(cwd), override);
}

import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative } from 'node:path';
import { redactConnectionString } from '../store/redact-connection-string.ts';
import { writeLine, type OutputStream } from './cli-context.ts';
import type { RunOutcome } from './run-view.ts';

/**
 * The lines `cadre run` ends with on stderr: the session id, how to export it and how to go on,
 * run as `outcome.command` (default `cadre`; see {@link cadreCommand}).
 */
export function printClosingHints(stderr: OutputStream, outcome: Pick<RunOutcome, 'sessionId' | 'status' | 'databaseFlag' | 'command'>): void {
  const { sessionId, command = 'cadre' } = outcome;
  const database = outcome.databaseFlag ? ` ${outcome.databaseFlag}` : '';
  writeLine(stderr, '');
  writeLine(stderr, `Session ${sessionId} (${outcome.status}).`);
  writeLine(stderr, `  export:   ${command} export ${sessionId} --format markdown${database}`);
  writeLine(stderr, `  continue: ${command} run --session ${sessionId}${database} "..."`);
}

/** Whether an executable file `name` is in one of the folders of a `PATH`. */
export function onPath(name: string, path: string | undefined): boolean {
  return (path ?? '').split(delimiter).some((folder) => {
    if (folder === '') return false;
    try {
      accessSync(join(folder, name), constants.X_OK);
      return statSync(join(folder, name)).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * How a person runs cadre again from their shell: `cadre` when their `PATH` has it (a global
 * install), else `npx cadre` (a clone of cadre, a project that installed it). Started by npm
 * (`npx cadre`, `npm run demo`: npm sets `npm_command`), the `PATH` is npm's, which has
 * `node_modules/.bin` in it and the shell's does not, so it is `npx cadre` then too.
 * @example cadreCommand({ npm_command: 'exec', PATH: '/usr/bin' }) // 'npx cadre'
 */
export function cadreCommand(env: Record<string, string | undefined>, found: (name: string, path: string | undefined) => boolean = onPath): string {
  if (env.npm_command !== undefined && env.npm_command !== '') return 'npx cadre';
  return found('cadre', env.PATH) ? 'cadre' : 'npx cadre';
}

/**
 * The `--db` a hint must repeat so a pasted command opens the same database, or nothing when the
 * next command finds it anyway: the default file of this folder, or the database `CADRE_DB` names
 * (the shell still has it). A URL is shown as given unless it holds a password or a secret
 * parameter, which become `***` (such a URL is better kept in `CADRE_DB`).
 * @example databaseFlag('/work', {}, 'postgres://cadre@db/cadre') // '--db postgres://cadre@db/cadre'
 */
export function databaseFlag(cwd: string, env: Record<string, string | undefined>, database: string): string | undefined {
  if (database === join(cwd, '.cadre', 'cadre.db')) return undefined;
  if (
    env.CADRE_DB !== undefined &&
    env.CADRE_DB.trim() !== '' &&
    (env.CADRE_DB === database || join(cwd, env.CADRE_DB) === database || env.CADRE_DB === relative(cwd, database))
  )
    return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(database)) return `--db ${holdsSecret(database) ? redactConnectionString(database) : database}`;
  const path = isAbsolute(database) ? relative(cwd, database) : database;
  return `--db ${path.startsWith('..') || path === '' ? database : path}`;
}

/** Whether a database URL carries a password or a secret parameter (a user name alone is none). */
function holdsSecret(url: string): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') return true;
    parsed.username = '';
    const bare = parsed.toString();
    return redactConnectionString(bare) !== bare;
  } catch {
    return true;
  }
}

import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { HarnessName } from '../agents/agent-definition.ts';
import type { HarnessDialect } from './harness-dialect.ts';

/** Where each program is, when not on the PATH (`harnesses.<name>.command` in the configuration). */
export type HarnessCommands = Partial<Record<HarnessName, { command: string }>>;

/** A program looked up: where it is, or where it was looked for. */
export interface FoundProgram {
  /** The command as configured, or the program's name. */
  command: string;
  /** Its absolute path; null when it was not found. */
  path: string | null;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds a harness's program: the configured command (a path, or a name on the PATH), else its own name on the PATH. */
export function findHarnessProgram(dialect: HarnessDialect, commands: HarnessCommands, pathVariable: string | undefined): FoundProgram {
  const command = commands[dialect.name]?.command ?? dialect.program;
  if (isAbsolute(command) || command.includes('/')) return { command, path: isExecutable(command) ? command : null };
  for (const folder of (pathVariable ?? '').split(delimiter)) {
    if (folder === '') continue;
    const candidate = join(folder, command);
    if (isExecutable(candidate)) return { command, path: candidate };
  }
  return { command, path: null };
}

/** The version a program prints for `--version` (its first line), or null when it does not answer within 10 s. */
export function programVersion(path: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(path, ['--version'], { env, timeout: 10_000 }, (error, stdout) => {
      const line = String(stdout).trim().split('\n')[0]?.trim();
      resolve(error || !line ? null : line);
    });
  });
}

/** The sentence a run that cannot start its program fails with: what is missing and how to install it. */
export function missingProgramMessage(dialect: HarnessDialect, found: FoundProgram): string {
  const where = found.command === dialect.program ? `'${dialect.program}' is not on the PATH` : `'${found.command}' is not an executable file`;
  return `${displayName(dialect)} is not installed here (${where}): install it with ${dialect.install}, or set harnesses.${dialect.name}.command in cadre.config.json.`;
}

/** The program's name as people know it. */
export function displayName(dialect: Pick<HarnessDialect, 'name'>): string {
  return dialect.name === 'claude-code' ? 'Claude Code' : dialect.name === 'codex' ? 'Codex' : 'opencode';
}

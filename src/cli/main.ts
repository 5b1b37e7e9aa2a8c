import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { CadreError } from '../errors/cadre-error.ts';
import { ConfigError } from '../errors/config-error.ts';
import { registerAgents } from './agents.ts';
import { registerApprovals } from './approvals.ts';
import { registerApprove } from './approve.ts';
import { processContext, writeLine, type CliContext, type ExitCode, type RegisterCommand } from './cli-context.ts';
import { registerExport } from './export.ts';
import { registerRun } from './run.ts';
import { registerRuns } from './runs.ts';
import { registerServe } from './serve.ts';
import { registerSessions } from './sessions.ts';
import { registerShow } from './show.ts';
import { registerStop } from './stop.ts';

function cadreVersion(): string {
  const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return packageJson.version;
}

/** The commands of `cadre`, in help order. */
export const commands: RegisterCommand[] = [
  registerRun,
  registerAgents,
  registerSessions,
  registerRuns,
  registerShow,
  registerStop,
  registerApprovals,
  registerApprove,
  registerExport,
  registerServe,
];

/** Builds the `cadre` program; commander's own exits become {@link CommanderError}s. */
export function createProgram(context: CliContext, exit: ExitCode, registrars: readonly RegisterCommand[] = commands): Command {
  const output = {
    writeOut: (text: string) => context.stdout.write(text),
    writeErr: (text: string) => context.stderr.write(text),
    // A usage error is one line: `cadre: unknown option '--modle' (Did you mean --model?) See cadre help.`
    outputError: (text: string, write: (text: string) => void) =>
      write(`cadre: ${text.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ').trim()} (see cadre help)\n`),
  };
  const program = new Command('cadre')
    .description('Delegate work from a primary agent to subagents, and follow each run.')
    .version(cadreVersion(), '-V, --version', 'print the version of cadre')
    .option('--debug', 'print stack traces of errors')
    .exitOverride()
    .configureOutput(output);
  for (const register of registrars) register(program, context, exit);
  for (const command of program.commands) command.exitOverride().configureOutput(output);
  return program;
}

function reportError(context: CliContext, error: unknown, debug: boolean): number {
  if (error instanceof CommanderError) {
    const ok = error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version';
    return ok ? 0 : 2;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (ConfigError.isInstance(error)) {
    writeLine(context.stderr, `cadre: ${message}`);
    if (debug && error.stack) writeLine(context.stderr, error.stack);
    return 2;
  }
  writeLine(context.stderr, `cadre: ${message.split('\n')[0]}`);
  if (debug && error instanceof Error && error.stack) writeLine(context.stderr, error.stack);
  else if (!CadreError.isInstance(error)) writeLine(context.stderr, '(run again with --debug for details)');
  return 1;
}

/**
 * Runs the `cadre` command line and returns its exit code; it never calls `process.exit`.
 * @param argv the arguments after `cadre`, e.g. `['run', 'Survey src/']`
 */
export async function main(argv: readonly string[], context: CliContext = processContext()): Promise<number> {
  const exit: ExitCode = { code: 0 };
  const program = createProgram(context, exit);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exit.code;
  } catch (error) {
    return reportError(context, error, argv.includes('--debug'));
  }
}

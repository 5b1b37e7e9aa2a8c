import { Command, CommanderError } from 'commander';
import { CadreError } from '../errors/cadre-error.ts';
import { ConfigError } from '../errors/config-error.ts';
import { registerAgents } from './agents.ts';
import { processContext, writeLine, type CliContext } from './cli-context.ts';
import { registerExport } from './export.ts';
import { registerRun } from './run.ts';
import { registerRuns } from './runs.ts';
import { registerSessions } from './sessions.ts';
import { registerShow } from './show.ts';
import { registerStop } from './stop.ts';

/** Where a command reports its exit code: 0 done, 1 failed, 2 bad usage or config, 130 stopped by a person. */
export interface ExitCode {
  code: number;
}

/**
 * Adds one command to the program. A command's action sets `exit.code`; it throws a
 * {@link ConfigError} for anything a person must fix (exit code 2).
 */
export type RegisterCommand = (program: Command, context: CliContext, exit: ExitCode) => void;

/**
 * The commands of `cadre`, in help order. `cadre serve` joins this list when the server lands:
 * add `registerServe` (src/cli/serve.ts, a {@link RegisterCommand}) after `registerExport`.
 */
export const commands: RegisterCommand[] = [
  registerRun,
  registerAgents,
  registerSessions,
  registerRuns,
  registerShow,
  registerStop,
  registerExport,
];

/** Builds the `cadre` program; commander's own exits become {@link CommanderError}s. */
export function createProgram(context: CliContext, exit: ExitCode, registrars: readonly RegisterCommand[] = commands): Command {
  const program = new Command('cadre')
    .description('Delegate work from a primary agent to subagents, and follow each run.')
    .option('--debug', 'print stack traces of errors')
    .showHelpAfterError('(run cadre help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
    });
  program.configureHelp({ sortSubcommands: false });
  for (const register of registrars) register(program, context, exit);
  for (const command of program.commands) {
    command.exitOverride().configureOutput({ writeOut: (text) => context.stdout.write(text), writeErr: (text) => context.stderr.write(text) });
  }
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

import { readFileSync } from 'node:fs';
import type { Command, CommanderError } from 'commander';
import { CadreError } from '../errors/cadre-error.ts';
import { ConfigError } from '../errors/config-error.ts';
import { processContext, writeLine, type CliContext, type ExitCode, type RegisterCommand } from './cli-context.ts';
import { registerAgents } from './commands/agents.ts';
import { registerApprovals } from './commands/approvals.ts';
import { registerApprove } from './commands/approve.ts';
import { registerCompletion } from './commands/completion.ts';
import { registerExport } from './commands/export.ts';
import { registerRun } from './commands/run.ts';
import { registerRuns } from './commands/runs.ts';
import { registerMcp } from './commands/mcp.ts';
import { registerServe } from './commands/serve.ts';
import { registerSessions } from './commands/sessions.ts';
import { registerShow } from './commands/show.ts';
import { registerStop } from './commands/stop.ts';
import { registerSend } from './commands/send.ts';
import { registerTrust } from './commands/trust.ts';
import { registerVersion } from './commands/version.ts';
import { registerWorker } from './commands/worker.ts';
import { registerWorktrees } from './commands/worktrees.ts';
import { registerWorkflow, registerWorkflows } from './commands/workflow.ts';

// Starting fast: this file and ./commands/* load only small helpers (commander itself once a
// command is parsed). Each command's action imports its own module (and through it the AI SDK,
// hono, the store...) when it runs, so `cadre --version` or `cadre runs` never pays for what they
// do not use. Keep it that way: register a new command in ./commands/<name>.ts with only type
// imports (commander's classes through `program.createOption` / `createArgument`).

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
  registerWorktrees,
  registerWorkflow,
  registerWorkflows,
  registerSend,
  registerApprovals,
  registerApprove,
  registerExport,
  registerServe,
  registerMcp,
  registerTrust,
  registerWorker,
  registerCompletion,
  registerVersion,
];

const helpAfter = `
Examples:
  cadre run "Find where sessions are stored and summarize"   # a prompt for the primary agent (main)
  git diff | cadre run --agent reviewer                        # the prompt from stdin
  cadre run --continue "Now write the tests"                   # go on with the most recent session
  cadre agents                                                 # which agents loaded, and from where
  cadre runs --json                                            # the latest runs as JSON
  cadre serve                                                  # the dashboard on http://127.0.0.1:4317
  claude mcp add cadre -- npx cadre mcp                        # delegate to cadre from an MCP host (Claude Code)

Environment:
  CADRE_MODEL          model spec provider:model-id, like anthropic:claude-sonnet-4-5 (--model)
  CADRE_BASE_URL       base URL of the model API, any provider (--base-url)
  CADRE_API_KEY        API key for the model provider (else the provider's own variable)
  ANTHROPIC_API_KEY    key for anthropic: models
  OPENAI_API_KEY       key for openai: models
  CADRE_DB             the database: a file (--db; default ./.cadre/cadre.db) or a postgres:// URL
  CADRE_QUEUE          a redis:// URL: runs execute on cadre worker processes (--queue for cadre worker)
  CADRE_CONFIG         the config file (--config; default ./cadre.config.json)
  CADRE_TRUST          1: trust this workspace's own configuration for this command only (--trust), as in CI
  XDG_CONFIG_HOME      where the user's config.json and agents/ live (default ~/.config; cadre/ under it)
  OTEL_EXPORTER_OTLP_ENDPOINT  OpenTelemetry traces over OTLP/HTTP, like http://localhost:4318 (or the config's telemetry key);
                       OTEL_EXPORTER_OTLP_PROTOCOL http/json or http/protobuf (default), OTEL_SERVICE_NAME (default cadre)
  CADRE_LOG_LEVEL      log level on stderr (--log-level): fatal, error, warn (default; serve: info), info, debug, trace, silent
  NO_COLOR             no colours in the terminal

Exit codes: 0 done, 1 failed, 2 bad usage or configuration, 130 stopped by a person.
Under --json every line on stdout is JSON, errors too: {"type":"error","message":"..."}.`;

/** How {@link createProgram} reports errors. */
export interface ProgramOptions {
  /** Whether errors are JSON lines on stdout (`--json`) rather than text on stderr. @default false */
  json?: boolean;
}

/** Writes an error as cadre does: one line on stderr, or a JSON line on stdout under `--json`. */
export function writeError(context: CliContext, message: string, json: boolean): void {
  if (json) writeLine(context.stdout, JSON.stringify({ type: 'error', message }));
  else writeLine(context.stderr, `cadre: ${message}`);
}

/** Builds the `cadre` program; commander's own exits become {@link CommanderError}s. */
export async function createProgram(
  context: CliContext,
  exit: ExitCode,
  registrars: readonly RegisterCommand[] = commands,
  { json = false }: ProgramOptions = {},
): Promise<Command> {
  const { Command } = await import('commander');
  const output = {
    writeOut: (text: string) => context.stdout.write(text),
    writeErr: (text: string) => context.stderr.write(text),
    // A usage error is one line: `cadre: unknown option '--modle' (Did you mean --model?) See cadre help.`
    outputError: (text: string) =>
      writeError(
        context,
        `${text
          .replace(/^error: /, '')
          .replace(/\s*\n\s*/g, ' ')
          .trim()} (see cadre help)`,
        json,
      ),
  };
  const program = new Command('cadre')
    .description('Delegate work from a primary agent to subagents, and follow each run.')
    .version(cadreVersion(), '-v, --version', 'print the version of cadre')
    .option('--db <path>', 'the database file (default ./.cadre/cadre.db, or CADRE_DB)')
    .option('--config <file>', 'config file (default ./cadre.config.json, or CADRE_CONFIG)')
    .option('--json', 'print JSON (JSON Lines for run); errors too, as {"type":"error",...}')
    .option('--debug', 'print stack traces of errors')
    .option(
      '--trust',
      "trust this workspace's own configuration (cadre.config.json, .mcp.json, agent files' MCP servers) for this command only (or CADRE_TRUST=1)",
    )
    .option(
      '--log-level <level>',
      'log level on stderr: fatal, error, warn (default; serve: info), info, debug, trace, silent (or CADRE_LOG_LEVEL); JSON lines off a terminal',
    )
    .addHelpText('after', helpAfter)
    .exitOverride()
    .configureHelp({ showGlobalOptions: true })
    .configureOutput(output);
  for (const register of registrars) register(program, context, exit);
  for (const command of program.commands) command.exitOverride().configureOutput(output).configureHelp({ showGlobalOptions: true });
  return program;
}

function isCommanderError(error: unknown): error is CommanderError {
  return error instanceof Error && typeof (error as CommanderError).code === 'string' && (error as CommanderError).code.startsWith('commander.');
}

function reportError(context: CliContext, error: unknown, { debug, json }: { debug: boolean; json: boolean }): number {
  if (isCommanderError(error)) {
    const ok = error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version';
    return ok ? 0 : 2;
  }
  const message = error instanceof Error ? error.message : String(error);
  const stack = debug && error instanceof Error ? error.stack : undefined;
  if (ConfigError.isInstance(error)) {
    writeError(context, message, json);
    if (stack) writeLine(context.stderr, stack);
    return 2;
  }
  writeError(context, message.split('\n')[0], json);
  if (stack) writeLine(context.stderr, stack);
  else if (!CadreError.isInstance(error) && !json) writeLine(context.stderr, '(run again with --debug for details)');
  return 1;
}

/**
 * Runs the `cadre` command line and returns its exit code; it never calls `process.exit`.
 * Bare `cadre` prints the help (exit 0), as gh and docker do.
 * @param argv the arguments after `cadre`, e.g. `['run', 'Survey src/']`
 */
export async function main(argv: readonly string[], context: CliContext = processContext()): Promise<number> {
  // The version alone needs no command line parser.
  // `-V` is commander's habit, which earlier versions of cadre had.
  const versionFlags = ['-v', '-V', '--version', 'version'];
  if (argv.length === 1 && versionFlags.includes(argv[0])) {
    writeLine(context.stdout, cadreVersion());
    return 0;
  }
  // Under --json the version is JSON too, whichever way it is asked for.
  if (argv.length === 2 && argv.includes('--json') && argv.some((arg) => versionFlags.includes(arg))) {
    writeLine(context.stdout, JSON.stringify({ version: cadreVersion() }));
    return 0;
  }
  const exit: ExitCode = { code: 0 };
  const json = argv.includes('--json');
  const program = await createProgram(context, exit, commands, { json });
  // Bare `cadre`, or only global flags like `cadre --debug`: the help, as gh and docker do.
  if (argv.every((arg) => ['--json', '--debug'].includes(arg))) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exit.code;
  } catch (error) {
    return reportError(context, error, { debug: argv.includes('--debug'), json });
  }
}

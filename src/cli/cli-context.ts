import type { Command } from 'commander';

/** A stream the CLI writes to; `isTTY`, `columns` and `rows` exist on terminals. */
export interface OutputStream {
  write(text: string): boolean;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

/** A stream the CLI reads a prompt from. */
export interface InputStream extends AsyncIterable<string | Buffer> {
  isTTY?: boolean;
  setEncoding?(encoding: BufferEncoding): unknown;
}

/** Where a command runs: the working directory, environment and standard streams. */
export interface CliContext {
  cwd: string;
  env: Record<string, string | undefined>;
  stdin: InputStream;
  stdout: OutputStream;
  stderr: OutputStream;
}

/** The context of this process. */
export function processContext(): CliContext {
  return { cwd: process.cwd(), env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
}

/** Whether output may be coloured: a terminal, and `NO_COLOR` unset (https://no-color.org). */
export function colorEnabled(context: CliContext, stream: OutputStream = context.stdout): boolean {
  return stream.isTTY === true && (context.env.NO_COLOR ?? '') === '';
}

/**
 * Whether `cadre run` should redraw a live view, rather than append plain lines: stdout is a
 * terminal that can move the cursor. `NO_COLOR` only takes the colour away, not the live view.
 */
export function liveViewEnabled(context: CliContext): boolean {
  return context.stdout.isTTY === true && (context.env.CI ?? '') === '' && context.env.TERM !== 'dumb';
}

/** Writes one line. */
export function writeLine(stream: OutputStream, text = ''): void {
  stream.write(`${text}\n`);
}

/** Where a command reports its exit code: 0 done, 1 failed, 2 bad usage or config, 130 stopped by a person. */
export interface ExitCode {
  code: number;
}

/**
 * Adds one command to the program. A command's action sets `exit.code`; it throws a
 * `ConfigError` for anything a person must fix (exit code 2).
 */
export type RegisterCommand = (program: Command, context: CliContext, exit: ExitCode) => void;

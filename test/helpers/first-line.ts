import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * Starts `script` with this Node and `args`, and resolves the first line it prints as JSON
 * (rejects if it exits first). Its stderr is the test's.
 * @example const { child, line } = startWithFirstLine<{ session_id: string }>(fixture, [path]);
 */
export function startWithFirstLine<T>(script: string, args: readonly string[]): { child: ChildProcess; line: Promise<T> } {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = new Promise<T>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (text) => resolve(JSON.parse(text) as T));
    child.once('exit', (code) => reject(new Error(`${script} exited early with ${code}`)));
  });
  return { child, line };
}

/** Starts `script` (see {@link startWithFirstLine}), kills it with SIGKILL once it printed its first line, and resolves that line. */
export async function killAfterFirstLine<T>(script: string, args: readonly string[]): Promise<T> {
  const { child, line } = startWithFirstLine<T>(script, args);
  const value = await line;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return value;
}

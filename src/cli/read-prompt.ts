import { ConfigError } from '../errors/config-error.ts';
import type { CliContext } from './cli-context.ts';

/**
 * The prompt of `cadre run`: the argument, or else everything on stdin.
 * @throws {ConfigError} when there is none: no argument and stdin is a terminal, or empty input.
 */
export async function readPrompt(context: CliContext, argument: string | undefined): Promise<string> {
  if (argument !== undefined) {
    if (argument.trim() === '') throw new ConfigError('The prompt is empty: say what the agent should do.');
    return argument;
  }
  if (context.stdin.isTTY) {
    throw new ConfigError('No prompt: pass it as an argument (cadre run "Survey src/") or pipe it on stdin (echo "..." | cadre run).');
  }
  context.stdin.setEncoding?.('utf8');
  let text = '';
  for await (const chunk of context.stdin) text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
  if (text.trim() === '') throw new ConfigError('No prompt: stdin was empty. Pass the prompt as an argument or pipe it on stdin.');
  return text.trim();
}

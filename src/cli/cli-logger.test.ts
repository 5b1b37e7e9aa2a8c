import { describe, expect, it } from 'vitest';
import type { CliContext } from './cli-context.ts';
import { cliLogger } from './cli-logger.ts';
import { main } from './main.ts';

function context(env: Record<string, string> = {}, isTTY = false) {
  const stderr: string[] = [];
  const value: CliContext = {
    cwd: process.cwd(),
    env: { CADRE_DB: ':memory:', HOME: '/nonexistent', ...env },
    stdin: { isTTY: true, async *[Symbol.asyncIterator]() {} },
    stdout: { write: () => true },
    stderr: { isTTY, write: (text) => stderr.push(text) > 0 },
  };
  return { value, stderr };
}

describe('the command line logger', () => {
  it('takes --log-level over CADRE_LOG_LEVEL over the command default, and writes JSON lines off a terminal', () => {
    const io = context({ CADRE_LOG_LEVEL: 'error' });
    cliLogger(io.value, { logLevel: 'info' }, (text) => text).info({ status: 200 }, 'request');
    cliLogger(io.value, {}, (text) => text, 'info').warn({}, 'below error: left out');
    cliLogger(io.value, {}, (text) => text.replace('sk-live-42', '[redacted]')).error({ err: new Error('key sk-live-42') }, 'internal error');
    expect(io.stderr.map((line) => JSON.parse(line))).toMatchObject([
      { level: 'info', msg: 'request', status: 200 },
      { level: 'error', msg: 'internal error', err: { message: 'key [redacted]' } },
    ]);
  });

  it('writes short lines on a terminal', () => {
    const io = context({}, true);
    cliLogger(io.value, {}, (text) => text).warn({ path: 'a.md' }, 'skipped a file');
    expect(io.stderr).toEqual(['cadre: warn: skipped a file (path=a.md)\n']);
  });

  it('refuses an unknown level with exit code 2, naming the levels', async () => {
    const io = context();
    expect(await main(['run', '--log-level', 'loud', 'hello'], io.value)).toBe(2);
    expect(io.stderr.join('')).toContain("--log-level must be one of fatal, error, warn, info, debug, trace, silent, not 'loud'.");
    const fromEnv = context({ CADRE_LOG_LEVEL: 'chatty' });
    expect(await main(['run', 'hello'], fromEnv.value)).toBe(2);
    expect(fromEnv.stderr.join('')).toContain('CADRE_LOG_LEVEL must be one of');
  });
});

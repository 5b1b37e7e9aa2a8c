import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliContext } from './cli-context.ts';
import { main } from './main.ts';

function context(stdin: CliContext['stdin'] = { isTTY: true, async *[Symbol.asyncIterator]() {} }, database = ':memory:') {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const value: CliContext = {
    cwd: process.cwd(),
    env: { CADRE_DB: database, HOME: '/nonexistent' },
    stdin,
    stdout: { write: (text) => stdout.push(text) > 0 },
    stderr: { write: (text) => stderr.push(text) > 0 },
  };
  return { value, stdout: () => stdout.join(''), stderr: () => stderr.join('') };
}

describe('main', () => {
  it('prints help with exit code 0', async () => {
    const io = context();
    expect(await main(['--help'], io.value)).toBe(0);
    expect(io.stdout()).toContain('Usage: cadre');
    expect(io.stdout()).toContain('serve');
  });

  it('prints its version with exit code 0', async () => {
    const io = context();
    expect(await main(['--version'], io.value)).toBe(0);
    expect(io.stdout()).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('reports a usage error in one line with exit code 2', async () => {
    const io = context();
    expect(await main(['run', '--modle', 'x'], io.value)).toBe(2);
    expect(io.stderr()).toBe("cadre: unknown option '--modle' (Did you mean --model?) (see cadre help)\n");
  });

  it('asks for a prompt when there is none and stdin is a terminal', async () => {
    const io = context();
    expect(await main(['run', '--model', 'ollama:llama3.1:8b'], io.value)).toBe(2);
    expect(io.stderr()).toMatch(/^cadre: No prompt: pass it as an argument .*\n$/);
  });

  it('reads the prompt from stdin and checks the model before anything runs', async () => {
    const io = context({ async *[Symbol.asyncIterator]() { yield 'Do it.\n'; } });
    expect(await main(['run', '--model', 'openai-compatible:x'], io.value)).toBe(2);
    expect(io.stderr()).toContain('needs a base URL: pass --base-url, set CADRE_BASE_URL');
  });

  it('answers an unknown id of cadre stop with exit code 2', async () => {
    const io = context();
    expect(await main(['stop', 'run_nope'], io.value)).toBe(2);
    expect(io.stderr()).toBe("cadre: No run or session 'run_nope'. List them with: cadre runs, cadre sessions\n");
  });

  it('reads a database file that does not exist as empty, and creates neither it nor its folder', async () => {
    const folder = join(tmpdir(), `cadre-missing-${process.pid}-${Date.now()}`);
    const database = join(folder, 'typo.db');
    const tty = { isTTY: true, async *[Symbol.asyncIterator]() {} };
    const sessions = context(tty, database);
    expect(await main(['sessions'], sessions.value)).toBe(0);
    expect(sessions.stdout()).toContain('no sessions yet');
    expect(await main(['runs'], context(tty, database).value)).toBe(0);
    expect(await main(['show', 'run_nope'], context(tty, database).value)).toBe(2);
    expect(await main(['export', 'ses_nope'], context(tty, database).value)).toBe(2);
    expect(await main(['stop', 'run_nope'], context(tty, database).value)).toBe(2);
    expect(existsSync(folder)).toBe(false);
  });

  it('refuses a --limit that is not a whole number from 1 to 1000 with exit code 2', async () => {
    for (const limit of ['abc', '0', '-3', '1001']) {
      const io = context();
      expect(await main(['sessions', '--limit', limit], io.value)).toBe(2);
      expect(io.stderr()).toBe(`cadre: --limit must be a whole number from 1 to 1000, not '${limit}'.\n`);
    }
    expect(await main(['runs', '--limit', '5'], context().value)).toBe(0);
  });
});

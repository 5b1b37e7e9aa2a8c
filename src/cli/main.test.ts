import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { eventFixture, runFixture, sessionFixture } from '../store/store-fixtures.ts';
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

  it('prints its version with exit code 0 for --version, -v and cadre version', async () => {
    for (const argv of [['--version'], ['-v'], ['-V'], ['version']]) {
      const io = context();
      expect(await main(argv, io.value)).toBe(0);
      expect(io.stdout()).toMatch(/^\d+\.\d+\.\d+\n$/);
    }
    for (const argv of [
      ['version', '--json'],
      ['--json', '--version'],
      ['-v', '--json'],
    ]) {
      const io = context();
      expect(await main(argv, io.value)).toBe(0);
      expect(JSON.parse(io.stdout())).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    }
  });

  it('prints help on stdout with exit code 0 when called bare, as gh and docker do', async () => {
    for (const argv of [[], ['--debug']]) {
      const io = context();
      expect(await main(argv, io.value)).toBe(0);
      expect(io.stdout()).toContain('Usage: cadre');
      expect(io.stderr()).toBe('');
    }
  });

  it('shows examples, the environment variables and the global options in its help', async () => {
    const io = context();
    expect(await main(['--help'], io.value)).toBe(0);
    for (const text of ['Examples:', 'cadre run --continue', 'Environment:', 'XDG_CONFIG_HOME', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'completion']) {
      expect(io.stdout()).toContain(text);
    }
    for (const variable of [
      'CADRE_MODEL',
      'CADRE_BASE_URL',
      'CADRE_API_KEY',
      'CADRE_DB',
      'CADRE_QUEUE',
      'CADRE_CONFIG',
      'ANTHROPIC_API_KEY',
      'OPENAI_API_KEY',
    ]) {
      expect(io.stdout()).toContain(variable);
    }
    const runs = context();
    expect(await main(['runs', '--help'], runs.value)).toBe(0);
    expect(runs.stdout()).toMatch(/--db <path>[\s\S]*--config <file>[\s\S]*--json/);
  });

  it('reports errors as JSON lines on stdout under --json, with the same exit codes', async () => {
    const usage = context();
    expect(await main(['run', '--json', '--modle', 'x'], usage.value)).toBe(2);
    expect(JSON.parse(usage.stdout())).toEqual({ type: 'error', message: "unknown option '--modle' (Did you mean --model?) (see cadre help)" });
    expect(usage.stderr()).toBe('');
    const missing = context();
    expect(await main(['--json', 'show', 'run_nope'], missing.value)).toBe(2);
    expect(JSON.parse(missing.stdout())).toEqual({ type: 'error', message: "No run 'run_nope'. List runs with: cadre runs" });
    const unknown = context();
    expect(await main(['stop', 'run_nope', '--json'], unknown.value)).toBe(2);
    expect(
      unknown
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).type),
    ).toEqual(['error']);
  });

  it('takes --db and --config before or after the command', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cadre-global-'));
    try {
      const database = join(folder, 'x.db');
      await writeFile(join(folder, 'cadre.json'), JSON.stringify({ db: database }));
      for (const argv of [
        ['--db', database, 'sessions'],
        ['sessions', '--db', database],
        ['--config', join(folder, 'cadre.json'), 'sessions'],
        ['sessions', '--config', join(folder, 'cadre.json')],
      ]) {
        const io = context(undefined, '');
        expect(await main([...argv, '--json'], io.value)).toBe(0);
        expect(JSON.parse(io.stdout())).toEqual([]);
      }
      const io = context(undefined, '');
      expect(await main(['--config', join(folder, 'nope.json'), 'runs'], io.value)).toBe(2);
      expect(io.stderr()).toContain('Config file not found');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('reads the config file CADRE_CONFIG names', async () => {
    const io = context();
    io.value.env.CADRE_CONFIG = join(tmpdir(), `cadre-no-such-${process.pid}.json`);
    expect(await main(['sessions'], io.value)).toBe(2);
    expect(io.stderr()).toContain('(given with CADRE_CONFIG)');
  });

  it('says there is nothing to continue when --continue finds no session', async () => {
    const io = context();
    expect(await main(['run', '--continue', '--model', 'ollama:llama3.1:8b', 'Go on'], io.value)).toBe(2);
    expect(io.stderr()).toBe('cadre: No session to continue in this database: start one with cadre run "..."\n');
    const both = context();
    expect(await main(['run', '-c', '--session', 'ses_x', '--model', 'ollama:llama3.1:8b', 'Go on'], both.value)).toBe(2);
    expect(both.stderr()).toContain('--continue and --session both name a session');
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
    const io = context({
      async *[Symbol.asyncIterator]() {
        yield 'Do it.\n';
      },
    });
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

  it('answers --json on the commands that print text otherwise: stop, export, completion', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cadre-json-'));
    try {
      const database = join(folder, 'cadre.db');
      const store = createSqliteStore({ path: database });
      await store.createSession(sessionFixture());
      await store.insertRun(runFixture({ id: 'run_done', status: 'completed', ended_at: '2025-01-01T00:00:05.000Z' }), eventFixture('run_done', 'run-queued'));
      await store.close();
      const stop = context(undefined, database);
      expect(await main(['stop', 'run_done', '--json'], stop.value)).toBe(0);
      expect(JSON.parse(stop.stdout())).toMatchObject({ stopped: [{ id: 'run_done', status: 'completed' }], still_active: [], session: null });
      const exported = context(undefined, database);
      expect(await main(['export', 'ses_1', '--json'], exported.value)).toBe(0);
      expect(JSON.parse(exported.stdout())).toMatchObject({ format: 'cadre.session-export', session: { id: 'ses_1' } });
      const conflict = context(undefined, database);
      expect(await main(['export', 'ses_1', '--json', '--format', 'markdown'], conflict.value)).toBe(2);
      expect(JSON.parse(conflict.stdout())).toEqual({ type: 'error', message: '--json and --format markdown ask for different formats: give one.' });
      const completion = context();
      expect(await main(['completion', 'bash', '--json'], completion.value)).toBe(0);
      expect(JSON.parse(completion.stdout())).toEqual({ shell: 'bash', script: expect.stringContaining('complete -o default -F _cadre_completion cadre') });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTool } from './bash-tool.ts';
import { toolInfo } from './define-tool.ts';
import { eventually } from '../../test/helpers/eventually.ts';

let root: string;

function call(tool: Tool, input: unknown, abortSignal?: AbortSignal): Promise<string> {
  return tool.execute!(input, { toolCallId: 'call_1', messages: [], context: undefined, abortSignal }) as Promise<string>;
}

async function failure(tool: Tool, input: unknown): Promise<string> {
  return call(tool, input).then(
    () => 'expected a tool error',
    (error: Error) => error.message,
  );
}

/** Live (not zombie) processes of a process group, from /proc. */
async function groupMembers(pgid: number): Promise<number[]> {
  const members: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] !== 'Z' && fields[0] !== undefined && Number(fields[2]) === pgid) members.push(Number(name));
  }
  return members;
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const found = await eventually(
    async () => {
      const value = await probe();
      return value === undefined ? undefined : { value };
    },
    { timeout: timeoutMs, interval: 25 },
  );
  return found.value;
}

/** The pid the command wrote to `file` in the workspace, once it is there. */
function pidIn(file: string): Promise<number> {
  return until(async () => {
    const text = await readFile(join(root, file), 'utf8').catch(() => '');
    return text.trim() === '' ? undefined : Number(text.trim());
  }, 5000);
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'cadre-bash-')));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('bash', () => {
  it('runs in the workspace root and reports stdout and stderr in order, with the exit code', async () => {
    const bash = createBashTool({ root });
    expect(await call(bash, { command: 'pwd; echo out; sleep 0.05; echo err >&2; exit 3' })).toBe(`${root}\nout\nerr\n[exit code: 3]`);
    expect(await call(bash, { command: 'true' })).toBe('(no output)\n[exit code: 0]');
  });

  it('gives commands the environment it was made with (process.env by default)', async () => {
    const bash = createBashTool({ root, env: { PATH: process.env.PATH, ONLY_THIS: 'yes' } });
    expect(await call(bash, { command: 'echo "$ONLY_THIS ${HOME:-no home}"' })).toBe('yes no home\n[exit code: 0]');
  });

  it('keeps the head and the tail of long output and says how many characters were omitted', async () => {
    const bash = createBashTool({ root, halfOutputChars: 100 });
    const output = await call(bash, { command: 'seq 1 100000' });
    const total = Array.from({ length: 100_000 }, (_, index) => `${index + 1}\n`).join('').length;
    expect(output.startsWith('1\n2\n3\n')).toBe(true);
    expect(output).toContain(`[… ${total - 200} characters omitted …]`);
    expect(output.endsWith('99999\n100000\n[exit code: 0]')).toBe(true);
  });

  it('kills the whole process group on timeout and says so', async () => {
    const bash = createBashTool({ root });
    const started = Date.now();
    const output = await call(bash, { command: 'echo $$ > timeout.pid; echo begun; sleep 1000 & sleep 1000', timeout_seconds: 0.5 });
    expect(output).toBe('begun\n[timed out after 0.5 s: the command and the processes it started were killed]');
    expect(Date.now() - started).toBeLessThan(2500);
    const pgid = await pidIn('timeout.pid');
    expect(await until(async () => ((await groupMembers(pgid)).length === 0 ? true : undefined), 2000)).toBe(true);
  });

  it('kills a `sleep 1000 & sleep 1000` tree within 2 s of a stop', async () => {
    const bash = createBashTool({ root });
    const controller = new AbortController();
    const running = call(bash, { command: 'echo $$ > abort.pid; sleep 1000 & sleep 1000' }, controller.signal).then(
      () => 'finished',
      (error: Error) => error.message,
    );
    const pgid = await pidIn('abort.pid');
    await until(async () => ((await groupMembers(pgid)).length >= 2 ? true : undefined), 2000);
    const stoppedAt = Date.now();
    controller.abort(new Error('stopped by a person'));
    expect(await running).toBe('stopped by a person');
    await until(async () => ((await groupMembers(pgid)).length === 0 ? true : undefined), 2000);
    expect(Date.now() - stoppedAt).toBeLessThan(2000);
  });

  it('ends the background processes a command leaves when its shell exits', async () => {
    const bash = createBashTool({ root });
    const started = Date.now();
    expect(await call(bash, { command: 'echo $$ > left.pid; sleep 1000 & echo started' })).toBe('started\n[exit code: 0]');
    expect(Date.now() - started).toBeLessThan(2000);
    const pgid = await pidIn('left.pid');
    await until(async () => ((await groupMembers(pgid)).length === 0 ? true : undefined), 2000);
  });

  for (const [how, ending] of [
    ['exits (process.exit, as a second Ctrl-C does)', 'process.exit(130);'],
    ['is sent SIGTERM', "process.kill(process.pid, 'SIGTERM');"],
  ] as const) {
    it(`kills a running command's process group when cadre ${how}`, async () => {
      const name = `cadre-${how.length}`;
      const script = join(root, `${name}.ts`);
      await writeFile(
        script,
        [
          `import { createBashTool } from ${JSON.stringify(new URL('./bash-tool.ts', import.meta.url).pathname)};`,
          `const bash = createBashTool({ root: ${JSON.stringify(root)} });`,
          `void bash.execute!({ command: 'echo $$ > ${name}.pid; sleep 1000 & sleep 1000' }, { toolCallId: 'c', messages: [], context: undefined });`,
          `const timer = setInterval(async () => { const fs = await import('node:fs'); if (fs.existsSync(${JSON.stringify(join(root, `${name}.pid`))})) { clearInterval(timer); setTimeout(() => { ${ending} }, 200); } }, 20);`,
        ].join('\n'),
      );
      const child = spawn(process.execPath, [script], { stdio: 'ignore' });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      const pgid = await pidIn(`${name}.pid`);
      await exited;
      await until(async () => ((await groupMembers(pgid)).length === 0 ? true : undefined), 2000);
    });
  }

  it('explains bad input', async () => {
    const bash = createBashTool({ root });
    expect(await failure(bash, { command: '  ' })).toBe("Invalid input for tool 'bash': command: must not be empty. Fix these and call it again.");
    expect(await failure(bash, { command: 'echo a\0b' })).toContain('command: must not contain NUL characters');
    expect(await failure(bash, { command: 'true', timeout_seconds: 0 })).toContain('timeout_seconds: must be more than 0');
    expect(await failure(bash, { command: 'true', timeout_seconds: 1e12 })).toContain('timeout_seconds: must be at most 1800');
    expect(await failure(bash, { command: 'true', timeout_seconds: '5' })).toContain('timeout_seconds: must be a number of seconds');
    expect(await failure(bash, {})).toContain('command: required: the command line to run');
  });

  it('is an exec tool whose argument is the command', () => {
    const bash = createBashTool({ root });
    expect(toolInfo(bash)?.risk).toBe('exec');
    expect(toolInfo(bash)?.argument({ command: 'npm test' })).toBe('npm test');
  });
});

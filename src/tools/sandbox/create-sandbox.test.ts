import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTool } from '../bash-tool.ts';
import { toolInfo } from '../define-tool.ts';
import { createSandbox, type SandboxOptions } from './create-sandbox.ts';
import { detectSandbox } from './detect-sandbox.ts';
import { SandboxUnavailableError } from './sandbox-unavailable-error.ts';
import { eventually } from '../../../test/helpers/eventually.ts';

// The box has a private /tmp: a Node under the host's temp folder (a clone there, as in a CI run
// from /tmp) is not visible inside, so the command finds the machine's own node on PATH instead.
const nodeInBox = process.execPath.startsWith(tmpdir()) ? 'node' : process.execPath;

let root: string;
let outside: string;
let server: Server;
let port: number;

function call(tool: Tool, input: unknown, abortSignal?: AbortSignal): Promise<string> {
  return tool.execute!(input, { toolCallId: 'call_1', messages: [], context: undefined, abortSignal }) as Promise<string>;
}

function bashIn(options: Omit<SandboxOptions, 'root'> = {}): Tool {
  return createBashTool({ root, sandbox: createSandbox({ root, ...options }) });
}

/** Live processes whose command line holds `token`, from /proc. */
async function processesWith(token: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const commandLine = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (commandLine.includes(token) && state !== 'Z' && state !== '') found.push(Number(name));
  }
  return found;
}

async function until(probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  await eventually(probe, { timeout: timeoutMs, interval: 25 });
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'cadre-box-')));
  outside = await realpath(await mkdtemp(join(tmpdir(), 'cadre-box-outside-')));
  await mkdir(join(root, '.cadre', 'agents'), { recursive: true });
  for (const file of ['cadre.db', 'cadre.db-wal', 'cadre.db-shm']) await writeFile(join(root, '.cadre', file), 'store');
  await writeFile(join(root, 'cadre.config.json'), '{}');
  server = createServer((_request, response) => response.end('reached'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')('bash in bubblewrap', () => {
  it('finds bubblewrap by running a command in a box (CI installs it)', async () => {
    expect(await detectSandbox()).toMatchObject({ available: true, kind: 'bubblewrap' });
    expect(await createSandbox({ root }).status()).toMatchObject({ mode: 'auto', kind: 'bubblewrap', confined: true, network: false });
  });

  it('writes in the workspace and its private /tmp, and nowhere else', async () => {
    const bash = bashIn();
    expect(await call(bash, { command: 'echo kept > made.txt && cat made.txt' })).toBe('kept\n[exit code: 0]');
    expect(await readFile(join(root, 'made.txt'), 'utf8')).toBe('kept\n');
    expect(await call(bash, { command: 'echo scratch > "$TMPDIR/x" && cat /tmp/x' })).toBe('scratch\n[exit code: 0]');
    const escaped = await call(bash, { command: `echo no > ${outside}/escaped.txt; echo no > ${root}/../escaped-too.txt; echo no > /etc/cadre-escaped` });
    expect(escaped).toMatch(/exit code: [1-9]/);
    await expect(readFile(join(outside, 'escaped.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readFile(join(root, '..', 'escaped-too.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readFile('/etc/cadre-escaped')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("keeps cadre's database, its companions, its folder and the config file read-only inside the workspace", async () => {
    const bash = bashIn();
    for (const command of [
      'echo x >> .cadre/cadre.db',
      'echo x > .cadre/cadre.db-wal',
      ': > .cadre/cadre.db-shm',
      'echo x > .cadre/cadre.db-journal',
      'rm -f .cadre/cadre.db',
      'echo "---" > .cadre/agents/evil.md',
      `echo '{"permissions":{"allow":["bash"]}}' > cadre.config.json`,
      'mv cadre.config.json moved.json',
    ]) {
      expect(await call(bash, { command }), command).toMatch(/(Read-only file system|Device or resource busy)[\s\S]*exit code: 1/);
    }
    expect(await readFile(join(root, '.cadre', 'cadre.db'), 'utf8')).toBe('store');
    expect(await readFile(join(root, '.cadre', 'cadre.db-wal'), 'utf8')).toBe('store');
    expect(await readdir(join(root, '.cadre'))).toEqual(['agents', 'cadre.db', 'cadre.db-shm', 'cadre.db-wal']);
    expect(await readdir(join(root, '.cadre', 'agents'))).toEqual([]);
    expect(await readFile(join(root, 'cadre.config.json'), 'utf8')).toBe('{}');
    // Reading them stays possible.
    expect(await call(bash, { command: 'cat .cadre/cadre.db cadre.config.json' })).toBe('store{}\n[exit code: 0]');
  });

  it('protects a database outside .cadre: its files, and its folder when that is not the workspace', async () => {
    await mkdir(join(root, 'data'), { recursive: true });
    await writeFile(join(root, 'data', 'my.db'), 'store');
    await writeFile(join(root, 'top.db'), 'store');
    const inFolder = bashIn({ db: join(root, 'data', 'my.db') });
    expect(await call(inFolder, { command: 'echo x > data/my.db-journal' })).toMatch(/Read-only file system/);
    const atRoot = bashIn({ db: join(root, 'top.db') });
    expect(await call(atRoot, { command: 'echo x >> top.db' })).toMatch(/Read-only file system/);
    expect(await call(atRoot, { command: 'echo ok > beside-top.txt && cat beside-top.txt' })).toBe('ok\n[exit code: 0]');
    expect(await readFile(join(root, 'top.db'), 'utf8')).toBe('store');
  });

  it('writes in sandbox.writable places too', async () => {
    const bash = bashIn({ writable: [outside] });
    expect(await call(bash, { command: `echo shared > ${outside}/shared.txt && cat ${outside}/shared.txt` })).toBe('shared\n[exit code: 0]');
  });

  it('reaches no network, not even a server on 127.0.0.1, unless sandbox.network is true', async () => {
    const fetchScript = `fetch('http://127.0.0.1:${port}/').then(async (r) => console.log(await r.text()), (e) => { console.log('unreachable', e.cause?.code ?? e.message); process.exit(7); })`;
    const closed = bashIn();
    expect(await call(closed, { command: `curl -sS -m 5 http://127.0.0.1:${port}/` })).toMatch(/Couldn't connect|Failed to connect[\s\S]*exit code: 7/);
    expect(await call(closed, { command: `"${nodeInBox}" -e "${fetchScript}"` })).toMatch(/^unreachable ECONNREFUSED\n\[exit code: 7\]$/);
    const open = bashIn({ network: true });
    expect(await call(open, { command: `curl -sS -m 5 http://127.0.0.1:${port}/` })).toBe('reached\n[exit code: 0]');
    expect(await call(open, { command: `"${nodeInBox}" -e "${fetchScript}"` })).toBe('reached\n[exit code: 0]');
  });

  it('kills every process inside the box on timeout', async () => {
    const bash = bashIn();
    const started = Date.now();
    const output = await call(bash, { command: 'echo begun; sleep 1001.5 & sleep 1001.5', timeout_seconds: 0.5 });
    expect(output).toBe('begun\n[timed out after 0.5 s: the command and the processes it started were killed]');
    expect(Date.now() - started).toBeLessThan(2500);
    await until(async () => (await processesWith('1001.5')).length === 0, 2000);
  });

  it('kills a `sleep 1000 & sleep 1000` tree inside the box within 2 s of a stop, setsid escapes included', async () => {
    const bash = bashIn();
    const controller = new AbortController();
    const running = call(bash, { command: 'setsid sleep 1002.5 & sleep 1002.5 & sleep 1002.5' }, controller.signal).then(
      () => 'finished',
      (error: Error) => error.message,
    );
    await until(async () => (await processesWith('1002.5')).length >= 3, 5000);
    const stoppedAt = Date.now();
    controller.abort(new Error('stopped by a person'));
    expect(await running).toBe('stopped by a person');
    await until(async () => (await processesWith('1002.5')).length === 0, 2000);
    expect(Date.now() - stoppedAt).toBeLessThan(2000);
  });

  it('runs unconfined when sandbox.mode is off', async () => {
    const bash = bashIn({ mode: 'off' });
    expect(await call(bash, { command: `echo free > ${outside}/free.txt && cat ${outside}/free.txt` })).toBe('free\n[exit code: 0]');
    expect(await createSandbox({ root, mode: 'off' }).status()).toMatchObject({ kind: 'none', confined: false, reason: 'sandbox.mode is off' });
  });
});

describe('without an OS sandbox', () => {
  const missing = async () => ({ available: false as const, reason: 'bubblewrap (bwrap) is not installed' });

  it('refuses bash under sandbox.mode required, before anyone is asked, with a clear tool error', async () => {
    const bash = createBashTool({ root, sandbox: createSandbox({ root, mode: 'required', detect: missing }) });
    const refusal = await toolInfo(bash)!
      .check({ command: 'echo hi' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(SandboxUnavailableError.isInstance(refusal)).toBe(true);
    expect(String(refusal)).toBe(
      "bash is refused: sandbox.mode is 'required' and there is no OS sandbox here (bubblewrap (bwrap) is not installed). " +
        'Do the task with the other tools, or say that a person must install the sandbox or change sandbox.mode in cadre.config.json.',
    );
    await expect(call(bash, { command: 'echo hi' })).rejects.toThrow(/sandbox.mode is 'required'/);
  });

  it('runs bash unconfined under auto and says why in its status', async () => {
    const sandbox = createSandbox({ root, detect: missing });
    expect(await call(createBashTool({ root, sandbox }), { command: 'echo hi' })).toBe('hi\n[exit code: 0]');
    expect(await sandbox.status()).toEqual({
      mode: 'auto',
      kind: 'none',
      confined: false,
      network: true,
      writable: ['anywhere the user can'],
      reason: 'bubblewrap (bwrap) is not installed',
    });
  });

  it('says what is missing on a platform without a sandbox, or without bwrap on the path', async () => {
    expect(await detectSandbox({ platform: 'win32' })).toEqual({ available: false, reason: 'cadre has no OS sandbox for win32' });
    expect(await detectSandbox({ platform: 'linux', path: root })).toMatchObject({
      available: false,
      reason: expect.stringContaining('bwrap) is not installed'),
    });
  });

  it('tells the model about the box in the description of bash, unless the sandbox is off', () => {
    const described = (sandbox?: ReturnType<typeof createSandbox>) => createBashTool({ root, sandbox }).description ?? '';
    expect(described(createSandbox({ root }))).toContain('Commands run in an OS sandbox where the machine has one');
    expect(described(createSandbox({ root, mode: 'off' }))).not.toContain('OS sandbox');
    expect(described()).not.toContain('OS sandbox');
  });

  it('refuses a list of hosts for network: this build has no filtering proxy', () => {
    expect(() => createSandbox({ root, network: ['example.com'] as unknown as boolean })).toThrow(/only true or false is supported/);
  });
});

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliContext } from './cli-context.ts';
import { main } from './main.ts';

let cwd: string;

beforeEach(async () => {
  cwd = await realpath(await mkdtemp(join(tmpdir(), 'cadre-cli-sandbox-')));
});

afterEach(() => rm(cwd, { recursive: true, force: true }));

async function agents(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const context: CliContext = {
    cwd,
    env: { HOME: cwd, CADRE_DB: ':memory:', PATH: process.env.PATH },
    stdin: { isTTY: true, async *[Symbol.asyncIterator]() {} },
    stdout: { write: (text) => ((stdout += text), true) },
    stderr: { write: (text) => ((stderr += text), true) },
  };
  const code = await main(['agents', ...args], context);
  return { code, stdout, stderr };
}

describe.runIf(process.platform === 'linux')('cadre agents and the sandbox', () => {
  it('ends with how bash is confined, and gives it as sandbox under --json', async () => {
    const plain = await agents([]);
    expect(plain.code).toBe(0);
    expect(plain.stdout.trimEnd().split('\n').at(-1)).toBe(
      `sandbox: bubblewrap (mode auto): bash writes only in ${cwd}, /tmp (private to each command); network off`,
    );
    const document = JSON.parse((await agents(['--json'])).stdout);
    expect(document.sandbox).toEqual({ mode: 'auto', kind: 'bubblewrap', confined: true, network: false, writable: [cwd, '/tmp (private to each command)'] });
  });

  it('follows sandbox in a trusted cadre.config.json: network, writable, and mode off', async () => {
    await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ sandbox: { network: true, writable: ['shared'] } }));
    expect((await agents(['--trust'])).stdout).toContain(`bash writes only in ${cwd}, ${join(cwd, 'shared')}, /tmp (private to each command); network on`);
    expect((await agents([])).stdout).toContain(`bash writes only in ${cwd}, /tmp (private to each command); network off`);
    await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ sandbox: { mode: 'off' } }));
    expect((await agents(['--trust'])).stdout).toContain('sandbox: none (sandbox.mode is off): bash commands run unconfined, as you');
    expect((await agents([])).stdout).toContain('sandbox: bubblewrap (mode auto)');
    await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ sandbox: { network: ['example.com'] } }));
    const refused = await agents([]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('sandbox.network: a list of hosts needs a filtering proxy');
  });
});

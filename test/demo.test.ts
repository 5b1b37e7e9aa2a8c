import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const demoScript = resolve(import.meta.dirname, '..', 'examples', 'demo', 'run-demo.ts');

interface DemoResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runDemo(args: readonly string[]): Promise<DemoResult> {
  const env = { PATH: process.env.PATH ?? '', HOME: directory, NO_COLOR: '1', LANG: 'C.UTF-8' };
  const child = spawn(process.execPath, [demoScript, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'cadre-demo-'));
});
afterAll(() => rm(directory, { recursive: true, force: true }));

describe('npm run demo', () => {
  it('says the model is scripted, logs each run, prints the answer and where the export is', async () => {
    const database = join(directory, 'plain.db');
    const result = await runDemo(['--db', database]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('the model is SCRIPTED');
    expect(result.stderr).toMatch(/^\[run_\w+ researcher\] started: Survey the store module$/m);
    expect(result.stderr).toMatch(/^\[run_\w+ reviewer\] completed \(\d+s\): src\/runs is well shaped/m);
    expect(result.stdout).toContain('The project has two core modules:');
    // The editor's edit of the scratch copy asks, and the demo answers it, saying so.
    const approvalId = /^\[(apr_\w+)\] editor \(run_\w+\) asks to run: edit_file \.cadre\/demo-scratch\/retry-policy\.ts/m.exec(result.stderr)?.[1];
    expect(approvalId).toBeDefined();
    expect(result.stdout).toContain(
      `demo: approved ${approvalId} (edit_file .cadre/demo-scratch/retry-policy.ts) automatically, as you would with: cadre approve ${approvalId}`,
    );
    expect(result.stderr).toContain(`[${approvalId}] approved by person: edit_file .cadre/demo-scratch/retry-policy.ts`);
    expect(result.stderr).toMatch(/^\[run_\w+ editor\] completed \(\d+s\): Raised maxAttempts from 3 to 5/m);
    expect(result.stdout).toContain('The scratch copy .cadre/demo-scratch/retry-policy.ts now reads: export const maxAttempts = 5;');
    expect(await readFile(resolve(import.meta.dirname, '..', 'examples', 'demo', 'files', 'retry-policy.ts'), 'utf8')).toContain(
      'export const maxAttempts = 3;',
    );
    const sessionId = /^Session (ses_\w+) \(completed\)\.$/m.exec(result.stderr)?.[1];
    expect(sessionId).toBeDefined();
    const exportPath = join(directory, 'demo-export.md');
    expect(result.stdout).toContain(`The whole session, with every run and its events, is in ${exportPath}`);
    expect(result.stdout).toContain(`npx cadre runs ${sessionId} --db ${database}`);
    const exported = await readFile(exportPath, 'utf8');
    expect(exported).toContain(`# Session ${sessionId}`);
    expect(exported).toContain(`approval-request edit_file .cadre/demo-scratch/retry-policy.ts (${approvalId})`);
    expect(exported).toContain(`approval-resolve approved by person (${approvalId})`);
  });

  it('with --json, writes only JSON Lines on stdout, ending with session-end', async () => {
    const result = await runDemo(['--json', '--db', join(directory, 'json.db'), 'Survey it.']);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; status?: string });
    expect(lines.at(-1)).toMatchObject({ type: 'session-end', status: 'completed' });
    expect(lines.filter((line) => line.type === 'run-event').length).toBeGreaterThan(4);
    expect(lines.filter((line) => line.type === 'approval').map((line) => (line as unknown as { approval: { status: string } }).approval.status)).toEqual([
      'pending',
      'approved',
    ]);
    expect(result.stderr).toMatch(/demo: approved apr_\w+ \(edit_file/);
    expect(result.stderr).toContain('the model is SCRIPTED');
  });

  it('refuses an unknown option with exit code 2 before anything runs', async () => {
    const result = await runDemo(['--db', join(directory, 'plain.db'), '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Unknown option '--bogus'");
    expect(result.stdout).toBe('');
  });
});
